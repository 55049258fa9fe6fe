export { bucketsUsed, openRunHistory, summarise } from './history.js';
export * from './types.js';
