/**
 * Luxon and node-cron, loaded on first use. Most commands never do calendar or cron arithmetic: a
 * `spend` on a sliding window resolves its config and spends without either, and loading the two
 * was about 10 ms of its start-up. What needs them (the upstream day, the backfill's pacing, the
 * scheduler, `status`) calls these; each library is loaded once and shared by every caller.
 *
 * The CLI bundle (scripts/bundle-cli.mjs) keeps this module as it is: both libraries stay in
 * node_modules, required from there on the first call, like pino (test/e2e/bundle.test.ts checks
 * which commands load them).
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** Luxon (its CommonJS build, the one `require` resolves). */
export function luxon(): typeof import('luxon') {
  return require('luxon') as typeof import('luxon');
}

/** node-cron (its CommonJS build, the one `require` resolves). */
export function nodeCron(): typeof import('node-cron') {
  return require('node-cron') as typeof import('node-cron');
}
