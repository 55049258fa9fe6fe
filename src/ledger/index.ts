export { LedgerCode } from './codes.js';
export { CrossSlotError, WindowMismatchError } from './errors.js';
export { openLedger } from './open.js';
export type * from './types.js';
