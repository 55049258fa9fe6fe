import { join } from 'node:path';
import { inject } from 'vitest';
import type { Config } from '../../src/config/types.js';
import type { GuardEvent, GuardLogger } from '../../src/guard/index.js';
import { openLedger } from '../../src/ledger/index.js';
import type { Ledger, OpenLedgerOptions } from '../../src/ledger/types.js';
import { parseYouTubeConfig as parseConfig } from '../../src/youtube/config/part.js';
import { fileTempDir } from '../harness/temp.js';

export const tmp = fileTempDir('qg-guard-').dir;
let seq = 0;

export function config(raw: Record<string, unknown>): Config {
  return parseConfig(raw, { env: {} });
}

/** A fresh SQLite ledger file (optionally on a fake clock). */
export function openSqlite(options: OpenLedgerOptions = {}): Promise<Ledger> {
  return openLedger(`sqlite:${join(tmp, `l${seq++}.db`)}`, options);
}

/** The shared private Redis, under a key prefix no other test uses. */
export function openRedis(options: OpenLedgerOptions = {}): Promise<Ledger> {
  return openLedger(inject('redisUrl'), { keyPrefix: `${inject('keyPrefix')}guard${seq++}:`, ...options });
}

export const BACKENDS: Array<{ name: string; open: () => Promise<Ledger> }> = [
  { name: 'sqlite', open: () => openSqlite() },
  { name: 'redis', open: () => openRedis() },
  {
    name: 'redis-cluster',
    open: () => openLedger(inject('redisClusterUrl'), { keyPrefix: `${inject('keyPrefix')}guard${seq++}:` }),
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
