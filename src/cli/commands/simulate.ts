/**
 * `quota-guard simulate [--port P] [--key K …] [--profile …] [--quota N] [--bucket name=N …]
 * [--seed S] [--day-length SEC] [--latency MS] [--error-rate R]`: run the upstream simulator on
 * loopback until SIGINT/SIGTERM. Prints its base URL (what `upstream.baseUrl` in the config should
 * be) and its control URL.
 */
import { type Command, InvalidArgumentError } from 'commander';
import { BUILTIN_PROFILE_IDS } from '../../profiles/profile-ids.js';
import { lazyAction } from '../action.js';
import { integerAtLeast } from '../options.js';

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
    .action(lazyAction(() => import('../actions/simulate.js')));
}
