import { join } from 'node:path';
import { inject } from 'vitest';
import { createGuard, type Guard, type GuardEvent, type GuardLogger } from '../../src/guard/index.js';
import type { DayOf } from '../../src/guard/pacing.js';
import { openLedger } from '../../src/ledger/index.js';
import type { Ledger, OpenLedgerOptions } from '../../src/ledger/types.js';
import { parseYouTubeConfig as parseConfig } from '../../src/youtube/config/part.js';
import type { YouTubeConfig as Config } from '../../src/youtube/config/types.js';
import { scheduledNeed } from '../../src/youtube/cron-runs.js';
import { fileTempDir } from '../harness/temp.js';

export const tmp = fileTempDir('qg-guard-').dir;
let seq = 0;
/**
 * This module's own part of the key prefix: each test file loads it afresh (its `seq` starts at 0
 * again), and files run at once on the one private Redis, so the counter alone would give two files
 * the same keys.
 */
const FILE_PREFIX = `${process.pid.toString(36)}${Math.random().toString(36).slice(2, 8)}`;

export function config(raw: Record<string, unknown>): Config {
  return parseConfig(raw, { env: {} });
}

/** A fresh SQLite ledger file (optionally on a fake clock). */
export function openSqlite(options: OpenLedgerOptions = {}): Promise<Ledger> {
  return openLedger(`sqlite:${join(tmp, `l${seq++}.db`)}`, options);
}

/** The shared private Redis, under a key prefix no other test uses. */
export function openRedis(options: OpenLedgerOptions = {}): Promise<Ledger> {
  return openLedger(inject('redisUrl'), {
    keyPrefix: `${inject('keyPrefix')}guard${FILE_PREFIX}-${seq++}:`,
    ...options,
  });
}

export const BACKENDS: Array<{ name: string; open: () => Promise<Ledger> }> = [
  { name: 'sqlite', open: () => openSqlite() },
  { name: 'redis', open: () => openRedis() },
  {
    name: 'redis-cluster',
    open: () =>
      openLedger(inject('redisClusterUrl'), {
        keyPrefix: `${inject('keyPrefix')}guard${FILE_PREFIX}-${seq++}:`,
      }),
  },
];

export interface Captured extends GuardLogger {
  lines: Array<{ level: string; msg: string; obj: object }>;
  events: GuardEvent[];
  onEvent: (e: GuardEvent) => void;
}

export function capture(): Captured {
  const lines: Captured['lines'] = [];
  const events: GuardEvent[] = [];
  return {
    lines,
    events,
    info: (obj, msg) => lines.push({ level: 'info', msg, obj }),
    warn: (obj, msg) => lines.push({ level: 'warn', msg, obj }),
    onEvent: (e) => events.push(e),
  };
}

/**
 * A guard over a fresh SQLite ledger, both on one fake clock set by `set(ms)` (so nothing depends on
 * when the test runs), told of the config's schedules (its trending runs are the scheduled need)
 * unless `schedules: false`. The caller closes `ledger`.
 */
export async function clockedGuard(
  raw: Record<string, unknown>,
  options: { start: number; schedules?: boolean; upstreamDay?: DayOf },
): Promise<{ guard: Guard; ledger: Ledger; config: Config; set(ms: number): void }> {
  let clock = options.start;
  const now = () => clock;
  const ledger = await openSqlite({ now });
  const cfg = config(raw);
  const guard = createGuard({
    config: cfg,
    ledger,
    logger: capture(),
    now,
    ...(options.schedules !== false ? { scheduledNeed: scheduledNeed(cfg) } : {}),
    ...(options.upstreamDay ? { upstreamDay: options.upstreamDay } : {}),
  });
  return {
    guard,
    ledger,
    config: cfg,
    set: (ms) => {
      clock = ms;
    },
  };
}
