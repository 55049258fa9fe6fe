/** The built-in quota profiles' ids (their data is in profiles.ts; this module loads nothing). */
export const BUILTIN_PROFILE_IDS = ['youtube-2026', 'youtube-classic'] as const;
