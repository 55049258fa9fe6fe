/**
 * A spend whose store command may still run is "unknown" to a caller that takes it
 * (`allowUnknown`), and `store-down` to one that does not: `serve --decisions` over a private Redis
 * paused with SIGSTOP, so the script is sent and its answer never comes in time. The clients take
 * it by their fail mode and settle it by its entry once the store is back.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openLedger } from '../../src/index.js';
import { type RedisServer, redisServers } from '../harness/redis.js';
import { drive, journalDir, journalLines, LANGS } from './drivers.js';
import { ApiClient, type Served, startServe, writeConfig } from './helpers.js';

const servers = redisServers();
let redis: RedisServer;
let served: Served;
let client: ApiClient;

beforeAll(async () => {
  redis = await servers.start();
  served = await startServe(writeConfig({ store: redis.url, credentials: [{ id: 'default' }] }));
  client = new ApiClient(served.url);
});

afterAll(async () => {
  await client?.close();
  await served?.stop();
  await servers.stopAll();
});

it('answers unknown to a caller that takes it when the store may still apply the spend, store-down otherwise', async () => {
  // The first spend loads the script; the store answers.
  const first = await client.spend({
    credential: 'default',
    bucket: 'units',
    entry: 'u-0',
    allowUnknown: true,
  });
  expect(first.body).toMatchObject({ allowed: true, reason: 'allowed' });
  redis.proc.kill('SIGSTOP');
  try {
    const unknown = await client.spend({
      credential: 'default',
      bucket: 'units',
      entry: 'u-1',
      allowUnknown: true,
    });
    expect(unknown.status).toBe(200);
    expect(unknown.body).toMatchObject({ allowed: false, reason: 'unknown', entry: 'u-1' });
    const old = await client.spend({ credential: 'default', bucket: 'units', entry: 'u-2' });
    expect(old.body).toMatchObject({ allowed: false, reason: 'store-down', entry: 'u-2' });
    const refused = await client.spend({ credential: 'default', bucket: 'units', allowUnknown: 'yes' });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: { code: 'QG_INVALID_ARGUMENT', field: 'allowUnknown' } });
  } finally {
    redis.proc.kill('SIGCONT');
  }
  const metrics = await (await fetch(`${served.url}/metrics`)).text();
  expect(metrics).toMatch(
    /quota_guard_api_requests_total\{[^}]*route="spend"[^}]*outcome="unknown"[^}]*\} 1\n/,
  );
});

it('the clients use or leave an unknown spend by their fail mode, and settle it once the store is back', async () => {
  const journal = join(journalDir(), 'journal.jsonl');
  redis.proc.kill('SIGSTOP');
  let runs: Awaited<ReturnType<typeof drive>>[];
  try {
    runs = await Promise.all(
      LANGS.map((lang) =>
        drive(lang, { url: served.url, deadline: 4, journal }, [
          { do: 'spend', bucket: 'units', tag: `${lang}-open`, failMode: 'open' },
          { do: 'spend', bucket: 'units', tag: `${lang}-closed`, failMode: 'closed' },
        ]),
      ),
    );
  } finally {
    redis.proc.kill('SIGCONT');
  }
  for (const r of runs) {
    expect(r.results.map((x) => [x.reason, x.allowed, x.journalled])).toEqual([
      ['unknown', true, 'record'],
      ['unknown', false, 'void'],
    ]);
    expect(r.said).toHaveLength(2);
    expect(r.said[0]).toContain('the service could not know');
  }
  expect(journalLines(journal)).toHaveLength(4);
  // The scripts the paused Redis received run now: both spends land, then the journal settles them.
  await sleep(500);
  // Without tokens both clients' lines are one caller's: whichever replays first sends all four.
  let replayed = 0;
  for (const lang of LANGS) {
    replayed += (await drive(lang, { url: served.url, journal }, [{ do: 'replay' }])).results[0]!.n!;
  }
  expect(replayed).toBe(4);
  expect(journalLines(journal)).toEqual([]);
  const ledger = await openLedger(redis.url);
  try {
    const { byTag } = await ledger.peek({ key: 'qg:{default}:units', windowMs: 86_400_000 });
    for (const lang of LANGS) {
      expect(byTag[`local:${lang}-open`], lang).toBe(1);
      expect(byTag[`local:${lang}-closed`] ?? 0, lang).toBe(0);
    }
  } finally {
    await ledger.close();
  }
});
