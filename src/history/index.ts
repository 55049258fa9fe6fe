export { openRunHistory } from './history.js';
export * from './types.js';
