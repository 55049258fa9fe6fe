/** Redis connections for every store kept on Redis (the ledger, the run history), and their errors. */
export {
  closeRedis,
  connectRedis,
  openRedisConnection,
  RedisConnection,
  type RedisConnectOptions,
  type RedisKind,
  redisAddress,
} from './connection.js';
export { mapRedisError, mayStillRun } from './errors.js';
