/**
 * `openQuotaGuard` is the one place the ledger, the guard and the run history are put together:
 * every command, `serve`, `run`, the drill and the demo open them through it (no second guard over
 * one ledger anywhere in src/), and its events can be listened to after it is open.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import type { GuardEvent } from '../../src/guard/types.js';
import { openQuotaGuard } from '../../src/quota-guard.js';
import { ROOT } from '../harness/imports.js';
import { fileTempDir } from '../harness/temp.js';

const tmp = fileTempDir('qg-one-opener-');

describe('the one opener', () => {
  it('is the only module in src/ that creates a guard or opens a ledger', () => {
    const sources = readdirSync(`${ROOT}/src`, { recursive: true, encoding: 'utf8' }).filter((f) =>
      f.endsWith('.ts'),
    );
    const opening = sources.filter((f) => {
      const text = readFileSync(`${ROOT}/src/${f}`, 'utf8');
      return /\b(createGuard|openLedger)\(/.test(text.replace(/^\s*(\/\/|\*).*$/gm, ''));
    });
    // The guard and the ledger define them; the handle calls them.
    expect(opening.sort()).toEqual(['guard/guard.ts', 'ledger/open.ts', 'quota-guard.ts']);
  });

  it('lets a listener subscribe to the guard after it is open, and stop listening', async () => {
    const config = parseConfig({ store: `sqlite:${tmp.path('one-opener.db')}` }, { env: {}, parts: [] });
    const seen: GuardEvent[] = [];
    const early: GuardEvent[] = [];
    await using qg = await openQuotaGuard(config, { onEvent: (e) => early.push(e), history: false });
    const stop = qg.subscribe((e) => seen.push(e));
    await qg.guard.spend({ credential: 'default', cost: 3 });
    expect(seen.map((e) => e.type)).toEqual(['spend']);
    stop();
    await qg.guard.spend({ credential: 'default', cost: 3 });
    expect(seen).toHaveLength(1);
    // The listener given at open hears everything.
    expect(early.map((e) => e.type)).toEqual(['spend', 'spend']);
  });
});
