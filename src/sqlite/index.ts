/** One way to open, identify, migrate and report the failures of a store's SQLite file (ledger and cache). */
export {
  type FailureKind,
  primaryCode,
  type StoreLabel,
  storeFailure,
} from './errors.js';
export { describeStep, STORES, type StoreFormat, type StoreIdentity } from './formats.js';
export {
  closeStore,
  type MigrationReport,
  migrateStore,
  type OpenedStore,
  type OpenStoreOptions,
  openStore,
} from './open.js';
