export { formatDuration, parseDuration } from './duration.js';
export {
  bucketOf,
  CONFIG_ENV,
  type Env,
  type LoadConfigOptions,
  loadConfig,
  methodOf,
  type ParseConfigOptions,
  parseConfig,
  STORE_ENV,
  storeKind,
} from './load.js';
export { DEFAULT_REGIONS } from './schema.js';
export * from './types.js';
