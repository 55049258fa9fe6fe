/**
 * The YouTube application's error codes, kept with it and registered with the core when this
 * module is loaded (every module that throws one imports it): a region the config does not name
 * or the upstream has no chart for, a search query the cache cannot run, a cache file it cannot
 * use. docs/errors.md lists them under the application.
 */
import { ExitCode, registerErrorCodes } from '../errors.js';

export const YOUTUBE_ERROR_CODES = {
  QG_UNKNOWN_REGION: ExitCode.CONFIG,
  QG_UPSTREAM_REGION_UNSUPPORTED: ExitCode.CONFIG,
  QG_QUERY_INVALID: ExitCode.USAGE,
  QG_CACHE_SCHEMA: ExitCode.SOFTWARE,
} as const satisfies Record<string, ExitCode>;

declare module '../errors.js' {
  interface ApplicationErrorCodes extends Record<keyof typeof YOUTUBE_ERROR_CODES, true> {}
}

registerErrorCodes(YOUTUBE_ERROR_CODES);
