// Registers the application's error codes, which this module throws.
import '../errors.js';
import { QuotaGuardError, type QuotaGuardErrorOptions } from '../../errors.js';

/** A search query the cache cannot run (empty, only exclusions, too long, prefix too short). */
export class QueryInvalidError extends QuotaGuardError {
  override name = 'QueryInvalidError';
  constructor(message: string, options: QuotaGuardErrorOptions = {}) {
    super('QG_QUERY_INVALID', message, { ...options, field: options.field ?? 'query' });
  }
}

/** The cache file cannot be used: written by a newer version, not a database, or damaged. */
export class CacheSchemaError extends QuotaGuardError {
  override name = 'CacheSchemaError';
  constructor(message: string, options: QuotaGuardErrorOptions = {}) {
    super('QG_CACHE_SCHEMA', message, options);
  }
}
