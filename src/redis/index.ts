/** Redis connections for every store kept on Redis (the ledger, the run history), and their errors. */
export {
  openRedisConnection,
  RedisConnection,
  type RedisConnectOptions,
  type RedisKind,
} from './connection.js';
export { mapRedisError, mayStillRun } from './errors.js';
export {
  checkRedisFormat,
  FORMAT_KEY,
  markRedisFormat,
  REDIS_FORMAT,
  type RedisFormat,
  readRedisFormat,
} from './format.js';
