/**
 * Several processes spending on one key at once, each with many spends in flight and random costs:
 * the sum admitted never exceeds the limit, and the ledger's own `used` equals what the clients
 * were told was admitted (minus what they refunded). On Redis and on a shared SQLite file.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { openLedger } from '../../src/index.js';

const CHILD = fileURLToPath(new URL('./children/spender.ts', import.meta.url));
const PROCESSES = 4;
const SPENDS = 400;
const HOUR = 3_600_000;
const dir = mkdtempSync(join(tmpdir(), 'qg-concurrency-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface ChildResult {
  admitted: number;
  refunded: number;
  allowed: number;
  denied: number;
}

/** Start the children, wait until each is connected, let them all go at once, collect results. */
async function runChildren(
  url: string,
  keyPrefix: string | undefined,
  key: string,
  limit: number,
  refundRate: number,
) {
  const children = Array.from({ length: PROCESSES }, (_v, i) => {
    const opts = {
      url,
      keyPrefix,
      key,
      limit,
      windowMs: HOUR,
      spends: SPENDS,
      inFlight: 16,
      seed: i + 1,
      refundRate,
    };
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(opts)], {
      stdio: ['pipe', 'pipe', 'inherit'],
      timeout: 90_000,
    });
    let out = '';
    const ready = new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.startsWith('ready\n')) resolve();
      });
      child.once('exit', () => reject(new Error(`child ${i} exited before it was ready`)));
    });
    const done = new Promise<ChildResult>((resolve, reject) => {
      child.once('exit', (code) => {
        if (code !== 0) reject(new Error(`child ${i} exited with ${code}`));
        else resolve(JSON.parse(out.slice('ready\n'.length).trim()) as ChildResult);
      });
    });
    return { child, ready, done };
  });
  await Promise.all(children.map((c) => c.ready));
  for (const c of children) c.child.stdin.end('go\n');
  const results = await Promise.all(children.map((c) => c.done));
  expect(results.reduce((s, r) => s + r.allowed + r.denied, 0)).toBe(PROCESSES * SPENDS);
  return results;
}

const targets: Array<[string, () => { url: string; keyPrefix?: string }]> = [
  ['redis', () => ({ url: inject('redisUrl'), keyPrefix: inject('keyPrefix') })],
  ['sqlite', () => ({ url: `sqlite:${join(dir, 'shared.db')}` })],
];

describe.each(targets)(`%s: ${PROCESSES} processes spending on one key`, (_name, target) => {
  it('never admits more than the limit, and used equals what the clients saw admitted', {
    timeout: 120_000,
  }, async () => {
    const { url, keyPrefix } = target();
    const key = `conc:{${randomBytes(4).toString('hex')}}`;
    const limit = 5000;
    const results = await runChildren(url, keyPrefix, key, limit, 0);
    const admitted = results.reduce((s, r) => s + r.admitted, 0);
    const ledger = await openLedger(url, keyPrefix ? { keyPrefix } : {});
    try {
      const snap = await ledger.peek({ key, windowMs: HOUR });
      expect(admitted).toBeLessThanOrEqual(limit);
      expect(snap.used).toBe(admitted);
      expect(snap.calls).toBe(results.reduce((s, r) => s + r.allowed, 0));
      // Contended for real: several processes were admitted, and the budget ran out.
      expect(results.filter((r) => r.allowed > 0).length).toBeGreaterThanOrEqual(2);
      expect(results.reduce((s, r) => s + r.denied, 0)).toBeGreaterThan(0);
      // Once anyone was denied, less than a maximal cost (20) was free: the budget was used up.
      expect(admitted).toBeGreaterThan(limit - 20);
    } finally {
      await ledger.close();
    }
  });

  it('keeps used equal to admitted minus refunded when processes refund as they go', {
    timeout: 120_000,
  }, async () => {
    const { url, keyPrefix } = target();
    const key = `conc:{${randomBytes(4).toString('hex')}}:refunds`;
    const results = await runChildren(url, keyPrefix, key, 3000, 0.2);
    const net = results.reduce((s, r) => s + r.admitted - r.refunded, 0);
    expect(results.reduce((s, r) => s + r.refunded, 0)).toBeGreaterThan(0);
    const ledger = await openLedger(url, keyPrefix ? { keyPrefix } : {});
    try {
      const snap = await ledger.peek({ key, windowMs: HOUR });
      expect(net).toBeLessThanOrEqual(3000);
      expect(snap.used).toBe(net);
    } finally {
      await ledger.close();
    }
  });
});
