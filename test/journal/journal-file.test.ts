/**
 * The guard's journal file: private (0600), shared by processes (two appending at once leave whole
 * lines, none lost), bounded (a full journal refuses and the guard says so in one line), holding no
 * secret, and its lines replayed once the store answers.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createGuard } from '../../src/guard/index.js';
import { JournalFile, parseJournal } from '../../src/guard/journal.js';
import { openLedger } from '../../src/ledger/index.js';
import { capture, config } from '../guard/helpers.js';
import { startProcess } from '../harness/child.js';
import { freePort } from '../harness/redis.js';
import { fileTempDir } from '../harness/temp.js';

const tmp = fileTempDir('qg-journal-').dir;
let seq = 0;

/** A journal line of one fail-open spend. */
function line(id: string, extra = '') {
  return {
    id,
    op: 'record' as const,
    written: 1,
    store: 'sqlite:/x',
    body: {
      credential: 'default',
      bucket: 'units',
      tier: 'scheduled' as const,
      cost: 1,
      tag: `t${extra}`,
      at: 1,
    },
  };
}

/** A child that appends `n` lines through JournalFile, each ~`pad` characters long. */
const APPENDER = `
import { JournalFile } from ${JSON.stringify(join(import.meta.dirname, '../../src/guard/journal.ts'))};
import { existsSync, writeFileSync } from 'node:fs';
const [path, who, n, pad] = process.argv.slice(1);
const j = new JournalFile({ path, maxBytes: 64 * 1024 * 1024 });
// Both writers start together, however long each took to load: each says it is ready and waits
// for the other (at most a minute).
writeFileSync(path + '.ready-' + who, '');
const other = path + '.ready-' + (who === 'p' ? 'q' : 'p');
for (let i = 0; i < 60000 && !existsSync(other); i++) await new Promise((r) => setTimeout(r, 1));
for (let i = 0; i < Number(n); i++) {
  // A breath between appends: each writer's run lasts hundreds of ms, far longer than the other's
  // wake-up after the barrier, so the two runs overlap.
  if (i > 0) await new Promise((r) => setTimeout(r, 1));
  const r = await j.append([{ id: who + '-' + i, op: 'record', written: Date.now(), store: 's',
    body: { credential: 'default', bucket: 'units', tier: 'scheduled', cost: 1, tag: 'x'.repeat(Number(pad)), at: Date.now() } }]);
  if (!r.ok) { console.error(r.message); process.exit(1); }
}
`;

/** A Redis ledger on a port nothing listens on: every call is `QG_STORE_UNAVAILABLE` at once. */
async function awayLedger() {
  const ledger = await openLedger(`redis://127.0.0.1:${await freePort()}`, {
    allowUnreachable: true,
    connectTimeoutMs: 300,
    commandTimeoutMs: 300,
  });
  afterAll(() => ledger.close());
  return ledger;
}

describe('the journal file', () => {
  it('is created private (0600) in a directory made for it, and holds no secret', async () => {
    const path = join(tmp, `d${seq++}`, 'sub', 'journal.jsonl');
    const j = new JournalFile({ path });
    expect(await j.append([line('a')])).toEqual({ ok: true });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    // The store's password never reaches it: the guard writes the redacted URL.
    const cfg = config({ store: { url: 'redis://:s3cret-pass@127.0.0.1:1/0' } });
    const ledger = await awayLedger();
    const guard = createGuard({ config: cfg, ledger, logger: capture(), journal: j });
    // The store is away: the spend fails open and is journalled.
    const o = await guard.spend({ credential: 'default', cost: 2, failMode: 'open' });
    expect(o).toMatchObject({ allowed: true, reason: 'fail-open' });
    expect(o.journal).toMatch(/^qgj-/);
    const text = readFileSync(path, 'utf8');
    expect(text).not.toContain('s3cret-pass');
    expect(parseJournal(text).entries.map((e) => e.id)).toEqual(['a', o.journal]);
  });

  it('two processes appending at once: every line whole, none lost', async () => {
    const path = join(tmp, `two${seq++}.jsonl`);
    const n = 300;
    const children = ['p', 'q'].map((who) =>
      startProcess(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', APPENDER, path, who, String(n), '3000'],
        {
          env: process.env,
          timeoutMs: 120_000,
        },
      ),
    );
    const exits = await Promise.all(children.map((c) => c.exited));
    for (const e of exits) expect(e, e.stderr).toMatchObject({ code: 0 });
    const { entries, bad } = parseJournal(readFileSync(path, 'utf8'));
    expect(bad).toBe(0);
    expect(entries).toHaveLength(2 * n);
    expect(new Set(entries.map((e) => e.id)).size).toBe(2 * n);
    // Lines of ~3 kB from two writers that started together interleave in time, never within a line.
    const order = entries.map((e) => e.id[0]).join('');
    expect(order).not.toBe('p'.repeat(n) + 'q'.repeat(n));
    expect(order).not.toBe('q'.repeat(n) + 'p'.repeat(n));
  }, 150_000);

  it('a full journal refuses the append, and the guard says so in one line', async () => {
    const path = join(tmp, `full${seq++}.jsonl`);
    const j = new JournalFile({ path, maxBytes: 700 });
    const log = capture();
    const errors: string[] = [];
    const ledger = await awayLedger();
    const guard = createGuard({
      config: config({}),
      ledger,
      logger: { ...log, error: (_o, msg) => errors.push(msg) },
      journal: j,
    });
    const outcomes = [];
    for (let i = 0; i < 6; i++) outcomes.push(await guard.spend({ credential: 'default', failMode: 'open' }));
    // Every spend still failed open (the call site's policy); the first ones are journalled.
    expect(outcomes.every((o) => o.allowed)).toBe(true);
    const journalled = outcomes.filter((o) => o.journal !== undefined).length;
    expect(journalled).toBeGreaterThan(0);
    expect(journalled).toBeLessThan(6);
    expect(guard.stats()).toMatchObject({ journalled, unjournalled: 6 - journalled });
    expect(statSync(path).size).toBeLessThanOrEqual(700);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      /journal .*full\d+\.jsonl is full \(\d+ of 700 bytes\): spends allowed while the store is down are no longer journalled/,
    );
  });

  it('a lock left by a process that is gone is taken over', async () => {
    const path = join(tmp, `stale${seq++}.jsonl`);
    // A pid that cannot be running (above the kernel's pid_max).
    writeFileSync(`${path}.lock`, '99999999');
    const j = new JournalFile({ path });
    expect(await j.append([line('a')])).toEqual({ ok: true });
    expect((await j.read()).entries).toHaveLength(1);
  });
});
