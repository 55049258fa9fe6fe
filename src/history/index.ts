export { openRunHistory } from './history.js';
export { lazyRunHistory } from './lazy.js';
export * from './types.js';
