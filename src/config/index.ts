export * from './defaults.js';
export { formatDuration, parseDuration } from './duration.js';
export {
  bucketOf,
  type Env,
  type LoadConfigOptions,
  loadConfig,
  methodOf,
  type ParseConfigOptions,
  parseConfig,
} from './load.js';
export * from './store-url.js';
export * from './types.js';
