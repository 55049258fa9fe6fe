/**
 * Durations in config files: a number of milliseconds, or a string of one or more `<n><unit>` parts
 * (`500ms`, `30s`, `15m`, `1h30m`, `24h`, `1d`).
 */

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const WHOLE = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d)\s*)+$/;
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;

/** Milliseconds for a duration, or undefined when it is not one. */
export function parseDuration(value: number | string): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  const s = value.trim();
  if (/^\d+$/.test(s)) return Number(s);
  if (!WHOLE.test(s)) return undefined;
  let total = 0;
  for (const [, n, unit] of s.matchAll(PART)) total += Number(n) * (UNIT_MS[unit!] ?? 0);
  return Math.round(total);
}

/** A short human form: `9h 12m`, `45s`, `120ms`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '∞';
  if (ms < 1_000) return `${Math.max(0, Math.round(ms))}ms`;
  let s = Math.ceil(ms / 1_000);
  const d = Math.floor(s / 86_400);
  s -= d * 86_400;
  const h = Math.floor(s / 3_600);
  s -= h * 3_600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  const parts: string[] = [];
  if (d) parts.push(`${d}d`);
  if (h) parts.push(`${h}h`);
  if (m && parts.length < 2) parts.push(`${m}m`);
  if (s && parts.length < 2 && !d) parts.push(`${s}s`);
  return parts.join(' ') || '0s';
}

/** `24h`, `1h`, `upstream day`. */
export function windowLabel(k: { window: 'sliding' | 'upstream-day'; windowMs: number }): string {
  if (k.window === 'upstream-day') return 'upstream day';
  const h = k.windowMs / 3_600_000;
  if (Number.isInteger(h)) return `${h}h`;
  const m = k.windowMs / 60_000;
  if (Number.isInteger(m)) return `${m}m`;
  return `${k.windowMs / 1000}s`;
}

/** An ISO-8601 duration, as the upstream gives a video's length (`PT4M13S`). */
export const ISO_DURATION = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

/** Seconds in an ISO-8601 duration such as `PT1H2M3S` (weeks and days count 7 × 24 h and 24 h). */
export function parseIsoDuration(duration: string): number {
  const m = ISO_DURATION.exec(duration);
  if (!m) return Number.NaN;
  const [, w, d, h, min, s] = m;
  return (
    Number(w ?? 0) * 604_800 +
    Number(d ?? 0) * 86_400 +
    Number(h ?? 0) * 3_600 +
    Number(min ?? 0) * 60 +
    Number(s ?? 0)
  );
}
