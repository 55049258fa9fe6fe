/**
 * `quota-guard simulate [--port P] [--key K …] [--profile …] [--quota N] [--bucket name=N …]
 * [--seed S] [--day-length SEC] [--latency MS] [--error-rate R]`: run the upstream simulator on
 * loopback until SIGINT/SIGTERM. Prints its base URL (what `upstream.baseUrl` in the config should
 * be) and its control URL.
 */
import { type Command, InvalidArgumentError } from 'commander';
import { ExitCode } from '../../errors.js';
import { BUILTIN_PROFILE_IDS } from '../../profiles/profile-ids.js';
import type { SimulatorOptions } from '../../simulator/index.js';
import { action } from '../action.js';
import { integerAtLeast } from '../options.js';

interface SimulateOptions {
  port: number;
  host: string;
  key: string[];
  profile: string;
  config?: string;
  legacyErrors?: boolean;
  quota?: number;
  bucket: Array<[string, number]>;
  seed?: string;
  dayLength?: number;
  chartPeriod?: number;
  region: string[];
  latency?: number;
  errorRate?: number;
  resetRate?: number;
  log?: boolean;
}

function positiveNumber(value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || n <= 0) throw new InvalidArgumentError('must be a number > 0');
  return n;
}

function rate(value: string): number {
  const n = Number(value);
  if (!/^\d*(\.\d+)?$/.test(value) || value === '' || n > 1)
    throw new InvalidArgumentError('must be a number 0–1');
  return n;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function collectBucket(value: string, previous: Array<[string, number]>): Array<[string, number]> {
  const m = /^([^=\s]+)=(\d+)$/.exec(value);
  if (!m) throw new InvalidArgumentError('must be name=units, e.g. search.list=100');
  return [...previous, [m[1] as string, Number(m[2])]];
}

function collectRegion(value: string, previous: string[]): string[] {
  if (!/^[A-Za-z]{2}$/.test(value)) throw new InvalidArgumentError('must be a two-letter region code');
  return [...previous, value.toUpperCase()];
}

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

export function register(program: Command): void {
  program
    .command('simulate')
    .description(
      'run a local simulator of the YouTube Data API (quota buckets, faults, synthetic data) until Ctrl-C',
    )
    .option('--port <port>', 'port to listen on (0: any free port)', integerAtLeast(0), 8089)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--key <key>', 'accepted API key, K or K@project (repeatable; default: any key)', collect, [])
    .option(
      '--profile <profile>',
      `quota model: ${BUILTIN_PROFILE_IDS.join(', ')}, or one defined under profiles in --config`,
      'youtube-2026',
    )
    .option(
      '-c, --config <file>',
      'a config file whose profiles --profile may name (nothing else in it is used)',
    )
    .option(
      '--legacy-errors',
      'errors as before the granular quota: keyInvalid, 403 quotaExceeded for every bucket (default with youtube-classic)',
    )
    .option('--quota <units>', 'daily units of the main bucket (units)', integerAtLeast(0))
    .option('--bucket <name=units>', 'daily units of another bucket (repeatable)', collectBucket, [])
    .option('--seed <seed>', 'seed of the synthetic data')
    .option(
      '--day-length <sec>',
      'drills: the quota resets every SEC seconds instead of at LA midnight',
      positiveNumber,
    )
    .option(
      '--chart-period <sec>',
      'charts move on every SEC seconds (default 3600, or day-length/24)',
      positiveNumber,
    )
    .option(
      '--region <code>',
      'region with a trending chart (repeatable; default US GB DE FR IN BR AU CA)',
      collectRegion,
      [],
    )
    .option('--latency <ms>', 'added latency per answer', integerAtLeast(0))
    .option('--error-rate <r>', 'share of requests answered 500 backendError (0–1)', rate)
    .option('--reset-rate <r>', 'share of connections reset mid-response (0–1)', rate)
    .option('--log', 'print one JSON line per request served')
    .action(
      action(async (opts: SimulateOptions) => {
        const [{ default: pino }, { startSimulator }, { profileFor }] = await Promise.all([
          import('pino'),
          import('../../simulator/index.js'),
          import('../profile.js'),
        ]);
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
      }),
    );
}
