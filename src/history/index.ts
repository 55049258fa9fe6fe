export { bucketsUsed, openRunHistory, summarise } from './history.js';
export { lazyRunHistory } from './lazy.js';
export * from './types.js';
