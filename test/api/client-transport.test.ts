/**
 * How the Python and PHP clients reach the service: one deadline per call, the next URL when one
 * does not answer, the URL's path kept, a hung service costing at most the deadline, the journal's
 * lines for what got no answer, one line on stderr for each fail-open and unknown, and (each
 * language) what only it has: Python's threads and its public exceptions, PHP's proxies and its
 * unset token. Real php-cli and python3 against a real `serve --decisions` on SQLite.
 */
import { execFile } from 'node:child_process';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLedger } from '../../src/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { diskOrSkip, smallDisk } from '../harness/disk.js';
import { tmpPath } from '../job-library/helpers.js';
import { CLIENT_DIR, drive, journalDir, journalLines, LANGS } from './drivers.js';
import { type Served, startServe, tokensFile, writeConfig } from './helpers.js';
import { closedPort, hungServer, type Listening, notingProxy, subPathProxy } from './proxies.js';

const run = promisify(execFile);
const DAY = 86_400_000;
const store = `sqlite:${tmpPath('transport-ledger.db')}`;
let served: Served;
let ledger: Ledger;
let token: string;
let hung: Listening & { requests: () => number };
let refused: string;

beforeAll(async () => {
  const t = tokensFile([{ name: 'job', credentials: ['default'], tiers: ['scheduled'] }]);
  token = t.secrets['job']!;
  served = await startServe(writeConfig({ store, credentials: [{ id: 'default' }] }), ['--tokens', t.file]);
  ledger = await openLedger(store);
  hung = await hungServer();
  refused = `http://127.0.0.1:${await closedPort()}`;
});

afterAll(async () => {
  await hung?.close();
  await ledger?.close();
  await served?.stop();
});

const units = async () => (await ledger.peek({ key: 'qg:{default}:units', windowMs: DAY })).used;

describe.each(LANGS)('the %s client', (lang) => {
  it('keeps the URL’s path: behind a proxy on /quota/ it spends through /quota/v1/spend', async () => {
    const proxy = await subPathProxy(served.url);
    try {
      const before = await units();
      const r = await drive(lang, { url: `${proxy.url}/quota/`, token }, [
        { do: 'spend', bucket: 'units', cost: 2 },
      ]);
      expect(r.results[0]).toMatchObject({ allowed: true, reason: 'allowed' });
      expect(proxy.paths).toEqual(['/quota/v1/spend']);
      expect((await units()) - before).toBe(2);
    } finally {
      await proxy.close();
    }
  });

  it('moves to the next URL when one refuses, at once, and keeps to the one that answered', async () => {
    const r = await drive(lang, { url: [refused, served.url], token, deadline: 5 }, [
      { do: 'spend', bucket: 'units' },
      { do: 'spend', bucket: 'units' },
    ]);
    expect(r.results.map((x) => x.reason)).toEqual(['allowed', 'allowed']);
    // No waiting out the deadline on the dead one: well under it (a refused connect is immediate).
    expect(r.results[0]!.ms).toBeLessThan(2_500);
    expect(r.said).toEqual([]);
  });

  it('moves on from a hung service within the attempt timeout', async () => {
    const r = await drive(lang, { url: [hung.url, served.url], token, deadline: 4, timeout: 0.5 }, [
      { do: 'spend', bucket: 'units' },
    ]);
    expect(r.results[0]).toMatchObject({ allowed: true, reason: 'allowed' });
    expect(r.results[0]!.ms).toBeGreaterThanOrEqual(450);
    expect(r.results[0]!.ms).toBeLessThan(4_000);
  });

  it('gives up on a hung service at the deadline: the spend is unknown, used or not by the fail mode', async () => {
    const dir = journalDir();
    const journal = join(dir, 'j.jsonl');
    const r = await drive(lang, { url: hung.url, token, deadline: 1, journal }, [
      { do: 'spend', bucket: 'units', cost: 3, name: 'closed' },
      { do: 'spend', bucket: 'units', cost: 4, failMode: 'open', name: 'open' },
    ]);
    const [closed, open] = r.results;
    expect(closed).toMatchObject({ allowed: false, reason: 'unknown', journalled: 'void' });
    expect(open).toMatchObject({ allowed: true, reason: 'unknown', journalled: 'record' });
    for (const x of r.results) {
      expect(x.ms).toBeGreaterThanOrEqual(900);
      // The deadline, and not the 15 s three 5 s attempts used to take; a little for the process.
      expect(x.ms).toBeLessThan(1_600);
    }
    // One line each on stderr, naming the entry, what was done and where it was journalled.
    expect(r.said).toHaveLength(2);
    expect(r.said[0]).toContain(`entry ${closed!.entry}`);
    expect(r.said[0]).toMatch(
      /^quota-guard: unknown: .*not used \(fail-closed\); journalled to be voided in /,
    );
    expect(r.said[1]).toMatch(/^quota-guard: unknown: .*used \(fail-open\); journalled to be recorded in /);
    const lines = journalLines(journal);
    expect(lines.map((l) => [l.op, l.body['entry']])).toEqual([
      ['void', closed!.entry],
      ['record', open!.entry],
    ]);
    expect(lines[1]!.body).toMatchObject({
      credential: 'default',
      bucket: 'units',
      cost: 4,
      tier: 'scheduled',
    });
    expect(typeof lines[1]!.body['at']).toBe('number');
  });

  it('when nothing answers: fail-open is journalled with one line on stderr, fail-closed refused', async () => {
    const dir = journalDir();
    const journal = join(dir, 'sub', 'j.jsonl');
    const r = await drive(lang, { url: refused, token, deadline: 0.6, journal }, [
      { do: 'spend', method: 'videos.list', tag: 'trending:US', failMode: 'open' },
      { do: 'spend', method: 'videos.list', failMode: 'closed' },
    ]);
    expect(r.results[0]).toMatchObject({ allowed: true, reason: 'fail-open', journalled: 'record' });
    expect(r.results[1]).toMatchObject({ allowed: false, reason: 'unreachable', journalled: null });
    expect(r.said).toHaveLength(1);
    expect(r.said[0]).toMatch(
      /^quota-guard: fail-open: spend of videos\.list for default \(entry \S+\): quota-guard unreachable \(.*connection refused\); allowed, journalled to be recorded in /,
    );
    // The journal: private to its user, one JSON object per line, no token in it.
    expect(statSync(journal).mode & 0o777).toBe(0o600);
    const lines = journalLines(journal);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ op: 'record', body: { method: 'videos.list', tag: 'trending:US' } });
    expect(JSON.stringify(lines)).not.toContain(token);
  });

  it('records a journalled fail-open spend at its own time once the service answers, once however often it is sent', async () => {
    const journal = join(journalDir(), 'j.jsonl');
    const made = await drive(lang, { url: refused, token, deadline: 0.3, journal }, [
      { do: 'spend', bucket: 'units', cost: 2, tag: `late-${lang}`, failMode: 'open' },
    ]);
    expect(made.results[0]).toMatchObject({ allowed: true, reason: 'fail-open', journalled: 'record' });
    // As if the outage had been a while ago: the spend was made 10 (Python) or 20 (PHP) minutes back.
    const at = Date.now() - (lang === 'python' ? 10 : 20) * 60_000;
    const [line] = journalLines(journal);
    const text = `${JSON.stringify({ ...line, body: { ...line!.body, at } })}\n`;
    const said: string[] = [];
    for (let i = 0; i < 3; i++) {
      writeFileSync(journal, text);
      const r = await drive(lang, { url: served.url, token, journal }, [{ do: 'replay' }]);
      expect(r.results[0]!.n).toBe(1);
      said.push(...r.said);
      expect(journalLines(journal)).toEqual([]);
    }
    expect(said).toEqual([
      expect.stringMatching(
        /^quota-guard: journal: replayed 1 line from \S+ \(1 spend recorded late, 0 already known or too old\), 0 left$/,
      ),
      expect.stringMatching(/\(0 spends recorded late, 1 already known or too old\), 0 left$/),
      expect.stringMatching(/\(0 spends recorded late, 1 already known or too old\), 0 left$/),
    ]);
    const { byTag } = await ledger.peek({ key: 'qg:{default}:units', windowMs: DAY });
    expect(byTag[`job:late-${lang}`]).toBe(2);
    // Written in the minute it was spent: it frees up when it would have.
    const minute = Math.floor(at / 60_000) * 60_000;
    const minutes = await ledger.perMinute({
      key: 'qg:{default}:units',
      windowMs: DAY,
      fromMs: minute,
      toMs: minute + 60_000,
    });
    expect(minutes).toEqual([{ minute, own: 2, outside: 0 }]);
  });

  it('a full journal says so in one line and refuses the fail-open spend it cannot hold', async () => {
    const journal = join(journalDir(), 'j.jsonl');
    const r = await drive(lang, { url: refused, token, deadline: 0.2, journal, journalMaxBytes: 300 }, [
      { do: 'spend', bucket: 'units', failMode: 'open' },
      { do: 'spend', bucket: 'units', failMode: 'open' },
    ]);
    expect(r.results.map((x) => [x.allowed, x.reason])).toEqual([
      [true, 'fail-open'],
      [false, 'journal-full'],
    ]);
    expect(r.said).toHaveLength(3);
    expect(r.said[1]).toMatch(
      /^quota-guard: journal: .*j\.jsonl is full \(\d+ of 300 bytes\): the fail-open spend .* is lost$/,
    );
    expect(r.said[2]).toMatch(/refused: it could not be journalled$/);
    expect(journalLines(journal)).toHaveLength(1);
  });

  it('a journal on a full disk says so in one line, refuses the fail-open spend, and leaves no half line', async (ctx) => {
    const disk = diskOrSkip(ctx, smallDisk(64) ?? 'cannot mount a small tmpfs here (root only)');
    try {
      try {
        writeFileSync(join(disk.dir, 'filler'), Buffer.alloc(1024 * 1024));
      } catch {
        // ENOSPC: the disk is full, as wanted
      }
      const journal = join(disk.dir, 'j.jsonl');
      const r = await drive(lang, { url: refused, token, deadline: 0.1, journal }, [
        { do: 'spend', bucket: 'units', failMode: 'open' },
      ]);
      expect(r.results[0]).toMatchObject({ allowed: false, reason: 'journal-full' });
      expect(r.said[0]).toMatch(
        /^quota-guard: journal: cannot write \S+j\.jsonl: No space left on device: the fail-open spend .* is lost$/,
      );
      expect(r.said[1]).toMatch(/refused: it could not be journalled$/);
      expect(statSync(journal).size).toBe(0);
    } finally {
      disk.cleanup();
    }
  });

  it('processes appending to one journal at once write whole lines', async () => {
    const journal = join(journalDir(), 'shared.jsonl');
    const steps = Array.from({ length: 15 }, () => ({
      do: 'spend' as const,
      bucket: 'units',
      failMode: 'open' as const,
    }));
    const runs = await Promise.all(
      Array.from({ length: 4 }, () => drive(lang, { url: refused, token, deadline: 0.05, journal }, steps)),
    );
    const entries = runs.flatMap((x) => x.results.map((s) => s.entry));
    const lines = journalLines(journal);
    expect(lines).toHaveLength(60);
    expect(new Set(lines.map((l) => l.body['entry']))).toEqual(new Set(entries));
  });
});

describe('the Python client', () => {
  it('serves 8 threads sharing one client: 400 decisions, none unreachable, each charged once', async () => {
    const before = await units();
    const script = `
import json, sys, threading
from quota_guard import QuotaGuard
qg = QuotaGuard(sys.argv[1], token=sys.argv[2], journal=False)
reasons = []
lock = threading.Lock()
def work():
    for _ in range(50):
        d = qg.spend("default", bucket="units", tag="threads")
        with lock:
            reasons.append(d.reason)
threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print(json.dumps({r: reasons.count(r) for r in set(reasons)}))
`;
    const r = await run('python3', ['-c', script, served.url, token], { cwd: CLIENT_DIR.python });
    expect(JSON.parse(r.stdout)).toEqual({ allowed: 400 });
    expect((await units()) - before).toBe(400);
  });

  it('status() raises the public QuotaGuardUnavailable, saying what each URL did', async () => {
    const r = await drive('python', { url: [refused, hung.url], token, deadline: 1, timeout: 0.3 }, [
      { do: 'status' },
    ]);
    expect(r.results[0]!.error).toBe('QuotaGuardUnavailable');
    expect(r.results[0]!.message).toMatch(/^quota-guard did not answer within 1 s: /);
    expect(r.results[0]!.message).toContain(`${refused}: connection refused`);
    expect(r.results[0]!.message).toContain(`${hung.url}: no answer in time`);
  });
});

describe('the PHP client', () => {
  it('leaves http_proxy alone for the service, so the token never goes through it; a proxy asked for is used', async () => {
    const proxy = await notingProxy();
    try {
      const env = {
        http_proxy: proxy.url,
        HTTP_PROXY: proxy.url,
        https_proxy: proxy.url,
        all_proxy: proxy.url,
      };
      const direct = await drive('php', { url: served.url, token }, [{ do: 'spend', bucket: 'units' }], env);
      expect(direct.results[0]).toMatchObject({ allowed: true, reason: 'allowed' });
      expect(proxy.seen).toEqual([]);
      const asked = await drive('php', { url: served.url, token, proxy: proxy.url, deadline: 0.5 }, [
        { do: 'spend', bucket: 'units' },
      ]);
      expect(asked.results[0]!.allowed).toBe(false);
      expect(proxy.seen.length).toBeGreaterThan(0);
    } finally {
      await proxy.close();
    }
  });

  it('says in one line that the token is not set, under strict_types, instead of a TypeError', async () => {
    const code = `declare(strict_types=1);
require 'QuotaGuard.php';
try {
    new QuotaGuard\\Client('http://127.0.0.1:9464', getenv('QG_NO_SUCH_TOKEN_VARIABLE'));
} catch (QuotaGuard\\ConfigError $e) {
    echo $e->getMessage(), "\\n";
}`;
    const r = await run('php', ['-r', code], { cwd: CLIENT_DIR.php });
    expect(r.stdout).toMatch(
      /^QuotaGuard\\Client: the token is not set \(getenv returned false\): set QUOTA_GUARD_TOKEN, or pass null [^\n]*\n$/,
    );
  });
});
