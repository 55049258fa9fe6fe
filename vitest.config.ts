import { defineConfig } from 'vitest/config';
import { sqliteDriver } from './src/sqlite/driver.js';

export default defineConfig({
  resolve: {
    // better-sqlite3 is installed under an alias per major (src/sqlite/driver.ts): a test that
    // imports it gets the one the library loads on this Node.
    alias: [{ find: /^better-sqlite3$/, replacement: sqliteDriver().entry }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    reporters: ['default', './test/harness/summary-reporter.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: keep the worker count low so timing-sensitive tests are not starved.
    maxWorkers: 2,
  },
});
