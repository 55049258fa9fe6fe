export * from './defaults.js';
export { formatDuration, parseDuration } from './duration.js';
export { type LoadConfigOptions, loadConfig, type ParseConfigOptions, parseConfig } from './load.js';
export { bucketOf, methodOf } from './lookups.js';
export * from './parts.js';
export * from './store-url.js';
export * from './tiers.js';
export * from './types.js';
