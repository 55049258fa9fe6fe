/**
 * Luxon and node-cron, loaded on first use. Most commands never do calendar or cron arithmetic: a
 * `spend` on a sliding window resolves its config and spends without either, and loading the two
 * was about 10 ms of its start-up. What needs them (the upstream day, the backfill's pacing, the
 * scheduler, `status`) calls these; each library is loaded once and shared by every caller.
 *
 * The CLI bundle (scripts/bundle-cli.mjs) keeps this module as it is: both libraries stay in
 * node_modules, required from there on the first call, like pino. A command that always needs them
 * (`status`) imports them itself and hands them over with `provideTimeLibs` before the first call,
 * so the bundle carries them in that command's chunk, about 3 ms of CPU less than requiring them
 * (test/e2e/bundle.test.ts checks which commands load them, and from where).
 */
import { createRequire } from 'node:module';

type Luxon = typeof import('luxon');
type NodeCron = typeof import('node-cron');

const require = createRequire(import.meta.url);

let luxonLib: Luxon | undefined;
let nodeCronLib: NodeCron | undefined;

/**
 * The two libraries, already imported, for every later call. Ignored for a library this process
 * has already loaded, so that all its calls share one copy.
 */
export function provideTimeLibs(libs: { luxon: Luxon; nodeCron: NodeCron }): void {
  luxonLib ??= libs.luxon;
  nodeCronLib ??= libs.nodeCron;
}

/** Luxon (its CommonJS build, the one `require` resolves, unless provided). */
export function luxon(): Luxon {
  luxonLib ??= require('luxon') as Luxon;
  return luxonLib;
}

/** node-cron (its CommonJS build, the one `require` resolves, unless provided). */
export function nodeCron(): NodeCron {
  nodeCronLib ??= require('node-cron') as NodeCron;
  return nodeCronLib;
}
