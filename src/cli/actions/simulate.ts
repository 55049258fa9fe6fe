/** `quota-guard simulate`: the action (its options are declared in src/cli/commands/simulate.ts). */
import pino from 'pino';
import { ExitCode } from '../../errors.js';
import { type SimulatorOptions, startSimulator } from '../../youtube/simulator/index.js';
import type { SimulateOptions } from '../command-options.js';
import { profileFor } from '../profile.js';

/** Resolves on the first SIGINT or SIGTERM. */
function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (sig: NodeJS.Signals) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(sig);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}

export async function run(opts: SimulateOptions): Promise<number | undefined> {
  const profile = await profileFor(opts.profile, opts.config);
  const logger = opts.log ? pino({ base: null }) : undefined;
  const options: SimulatorOptions = {
    port: opts.port,
    host: opts.host,
    profile,
    ...(opts.legacyErrors ? { legacyErrors: true } : {}),
    ...(opts.key.length ? { keys: opts.key } : {}),
    ...(opts.quota !== undefined ? { quota: opts.quota } : {}),
    ...(opts.bucket.length ? { buckets: Object.fromEntries(opts.bucket) } : {}),
    ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
    ...(opts.dayLength !== undefined ? { dayLengthSec: opts.dayLength } : {}),
    ...(opts.chartPeriod !== undefined ? { chartPeriodSec: opts.chartPeriod } : {}),
    ...(opts.region.length ? { regions: opts.region } : {}),
    // A fault setting left undefined keeps its default (Faults.set skips it).
    faults: { latencyMs: opts.latency, errorRate: opts.errorRate, resetRate: opts.resetRate },
    ...(logger ? { onRequest: (e) => logger.info(e, 'request') } : {}),
  };
  const signal = untilSignal();
  const sim = await startSimulator(options);
  const projects = new Set(sim.stats().projects ? Object.keys(sim.stats().projects) : []);
  const keys = opts.key.length ? `${opts.key.length} key(s) on ${projects.size} project(s)` : 'any key';
  process.stdout.write(
    `quota-guard simulator: ${sim.url}\n` +
      `  profile ${sim.profile.id}, ${keys}, next reset ${new Date(sim.nextResetAt()).toISOString()}\n` +
      `  control: ${sim.controlUrl}/stats\n`,
  );
  await signal;
  await sim.close();
  process.stdout.write('quota-guard simulator: stopped\n');
  return ExitCode.OK;
}
