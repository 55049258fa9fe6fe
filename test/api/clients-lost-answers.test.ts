/**
 * A lost answer is unknown, never refused: 1,000 spends (500 from each client) through a loopback
 * proxy that passes every request on to `serve` but swallows the answers to every tenth spend for
 * longer than the client's whole deadline, retries included. The spends land; their answers never
 * come. Once the journals are replayed, no decision is charged and reported refused, and every
 * one is either used (allowed, and charged once) or taken back.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openLedger } from '../../src/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { drive, journalDir, journalLines, LANGS, type Lang, type Step } from './drivers.js';
import { type Served, startServe, tokensFile, writeConfig } from './helpers.js';
import { swallowingProxy } from './proxies.js';

const DAY = 86_400_000;
const SPENDS = 500;
const cred = `lost${randomBytes(4).toString('hex')}`;
let served: Served;
let ledger: Ledger;
let secrets: Record<string, string>;

beforeAll(async () => {
  const t = tokensFile([
    { name: 'python', credentials: [cred] },
    { name: 'php', credentials: [cred] },
  ]);
  secrets = t.secrets;
  const config = writeConfig({
    store: inject('redisUrl'),
    credentials: [{ id: cred, buckets: { units: { quota: 100_000 } } }],
  });
  served = await startServe(config, ['--tokens', t.file]);
  ledger = await openLedger(inject('redisUrl'));
});

afterAll(async () => {
  await ledger?.close();
  await served?.stop();
});

describe('1,000 spends with every tenth answer lost for the whole deadline', () => {
  // About 15 s: 50 answers lost for 0.3 s each per client, the two clients at once.
  it('none charged and reported refused; each used or taken back once the journals are replayed', {
    timeout: 90_000,
  }, async () => {
    const proxy = await swallowingProxy(new URL(served.url), 10);
    const deadline = 0.3;
    const journal = (lang: Lang) => join(journalDir(), `${lang}.jsonl`);
    const journals = { python: journal('python'), php: journal('php') };
    try {
      const steps = (lang: Lang): Step[] => [
        ...Array.from(
          { length: SPENDS },
          (_, i): Step => ({
            do: 'spend',
            credential: cred,
            bucket: 'units',
            tag: `${lang}-${i}`,
            failMode: i % 2 === 0 ? 'open' : 'closed',
          }),
        ),
        { do: 'close' },
      ];
      const runs = await Promise.all(
        LANGS.map((lang) =>
          drive(
            lang,
            { url: proxy.url, token: secrets[lang]!, deadline, timeout: 0.1, journal: journals[lang] },
            steps(lang),
          ),
        ),
      );
      expect(proxy.swallowed()).toBeGreaterThanOrEqual(95);
      const used = (await ledger.peek({ key: `qg:{${cred}}:units`, windowMs: DAY })).byTag;
      let unknown = 0;
      for (const [k, lang] of LANGS.entries()) {
        const r = runs[k]!;
        const spends = r.results.filter((x) => x.do === 'spend');
        expect(spends).toHaveLength(SPENDS);
        for (const [i, d] of spends.entries()) {
          const charged = used[`${lang}:${lang}-${i}`] ?? 0;
          // Allowed: used, and charged exactly once. Refused (a denial or an unknown not used): not charged.
          expect([d.allowed, charged], `${lang} spend ${i}: ${d.reason}`).toEqual([
            d.allowed,
            d.allowed ? 1 : 0,
          ]);
          // No call past its deadline (and the process's own scheduling on a busy machine).
          expect(d.ms).toBeLessThan(deadline * 1000 + 2000);
          if (d.reason === 'unknown') unknown++;
        }
        // Every unknown decision said one line on stderr.
        expect(r.said.filter((l) => l.startsWith('quota-guard: unknown: '))).toHaveLength(
          spends.filter((d) => d.reason === 'unknown').length,
        );
        expect(journalLines(journals[lang])).toEqual([]);
      }
      // Every swallowed answer is an unknown decision; an answer late on a busy machine may be one too.
      expect(unknown).toBeGreaterThanOrEqual(proxy.swallowed());
    } finally {
      await proxy.close();
    }
  });
});
