export { DEFAULT_CACHE_PATH } from '../defaults.js';
export { type Cache, openCache } from './cache.js';
export { QueryInvalidError } from './errors.js';
export { parseQuery } from './query.js';
export type * from './types.js';
