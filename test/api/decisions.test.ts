/**
 * The decision API through a real `serve --decisions` process over a real Redis: spends, the same
 * entry sent again, conflicts, outcome reports, tokens, and bodies it must refuse. Every answer is
 * checked against docs/openapi.yaml as it arrives.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openLedger } from '../../src/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { ApiClient, type Served, startServe, tokensFile, writeConfig } from './helpers.js';
import { OPENAPI, seen } from './openapi.js';

const cred = `api${randomBytes(4).toString('hex')}`;
const other = `${cred}b`;
const DAY = 86_400_000;
let served: Served;
let ledger: Ledger;
let secrets: Record<string, string>;
const clients: ApiClient[] = [];

function client(token?: string): ApiClient {
  const c = new ApiClient(served.url, token);
  clients.push(c);
  return c;
}

const used = async (c = cred) => (await ledger.peek({ key: `qg:{${c}}:units`, windowMs: DAY })).used;

beforeAll(async () => {
  const t = tokensFile([
    { name: 'php-cron', credentials: [cred], tiers: ['scheduled'], mayBlock: true },
    { name: 'py-cron', credentials: [cred], tiers: ['scheduled'] },
    { name: 'elsewhere', credentials: [other], tiers: ['scheduled', 'manual'] },
  ]);
  secrets = t.secrets;
  const config = writeConfig({
    store: inject('redisUrl'),
    credentials: [
      { id: cred, apiKeyEnv: 'QG_API_TEST_KEY' },
      { id: other, apiKeyEnv: 'QG_API_TEST_KEY' },
    ],
  });
  served = await startServe(config, ['--tokens', t.file]);
  ledger = await openLedger(inject('redisUrl'));
});

afterAll(async () => {
  for (const c of clients) await c.close();
  await served?.stop();
  await ledger?.close();
});

describe('POST /v1/spend', () => {
  it('answers a spend with the guard’s decision, and the same entry again with the first one, charged once', async () => {
    const php = client(secrets['php-cron']);
    const before = await used();
    const first = await php.spend({
      credential: cred,
      method: 'videos.list',
      entry: 'run1-US-1',
      tag: 'trending:US',
    });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      allowed: true,
      reason: 'allowed',
      entry: 'run1-US-1',
      replayed: false,
      credential: cred,
      bucket: 'units',
      method: 'videos.list',
      tier: 'scheduled',
      cost: 1,
      // The method joins the tag, so status can split the spend by method.
      tag: 'php-cron:trending:US:videos.list',
      retryAfterMs: 0,
    });
    const again = await php.spend({
      credential: cred,
      method: 'videos.list',
      entry: 'run1-US-1',
      tag: 'trending:US',
    });
    expect(again.body).toMatchObject({
      allowed: true,
      replayed: true,
      at: (first.body as { at: number }).at,
    });
    expect(await used()).toBe(before + 1);
  });

  it('is a 409 for the same entry with another request, and records nothing', async () => {
    const php = client(secrets['php-cron']);
    await php.spend({ credential: cred, method: 'videos.list', entry: 'conflict-1' });
    const before = await used();
    const r = await php.spend({ credential: cred, method: 'search.list', entry: 'conflict-1' });
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ error: { code: 'QG_ENTRY_CONFLICT' } });
    expect(await used()).toBe(before);
  });

  it('denies as an ordinary answer with Retry-After, the resume time and what limited it', async () => {
    const c = client(secrets['elsewhere']);
    const full = await c.spend({ credential: other, bucket: 'units', cost: 9500, entry: 'fill' });
    expect(full.body).toMatchObject({ allowed: true, remaining: 0 });
    const r = await c.spend({ credential: other, method: 'videos.list', entry: 'denied-1' });
    expect(r.status).toBe(200);
    const b = r.body as { retryAfterMs: number; resumeAtMs: number; resumeAt: string; at: number };
    expect(r.body).toMatchObject({ allowed: false, reason: 'budget', limitedBy: 'units', remaining: 0 });
    expect(b.retryAfterMs).toBeGreaterThan(DAY - 60_000);
    expect(b.resumeAtMs).toBe(b.at + b.retryAfterMs);
    expect(Date.parse(b.resumeAt)).toBe(b.resumeAtMs);
    expect(Number(r.headers['retry-after'])).toBe(Math.ceil(b.retryAfterMs / 1000));
    // The manual tier's ceiling is higher: the same token may spend it.
    const manual = await c.spend({ credential: other, method: 'videos.list', tier: 'manual' });
    expect(manual.body).toMatchObject({ allowed: true, tier: 'manual' });
  });
});

describe('tokens', () => {
  it('refuses a wrong token (401), another credential or tier (403), and records nothing', async () => {
    const before = await used();
    const wrong = client('not-a-token');
    expect((await wrong.spend({ credential: cred, method: 'videos.list' })).status).toBe(401);
    const none = client();
    expect((await none.spend({ credential: cred, method: 'videos.list' })).status).toBe(401);
    const elsewhere = client(secrets['elsewhere']);
    const r = await elsewhere.spend({ credential: cred, method: 'videos.list' });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ error: { code: 'forbidden' } });
    const php = client(secrets['php-cron']);
    expect((await php.spend({ credential: cred, method: 'videos.list', tier: 'manual' })).status).toBe(403);
    expect((await php.spend({ credential: cred, method: 'videos.list', tier: 'backfill' })).status).toBe(403);
    expect((await wrong.call('GET', '/v1/status')).status).toBe(401);
    expect(await used()).toBe(before);
    expect(served.stderr()).not.toContain(secrets['php-cron']);
  });
});

describe('POST /v1/report', () => {
  it('refunds a call never sent, once however often it is reported', async () => {
    const py = client(secrets['py-cron']);
    const before = await used();
    await py.spend({ credential: cred, bucket: 'units', cost: 100, entry: 'refused-1' });
    expect(await used()).toBe(before + 100);
    for (let i = 0; i < 3; i++) {
      const r = await py.report({ credential: cred, entry: 'refused-1', outcome: 'never-sent' });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        entry: 'refused-1',
        outcome: 'never-sent',
        bucket: 'units',
        allowed: true,
      });
    }
    expect(await used()).toBe(before);
    // Sent: stays charged.
    await py.spend({ credential: cred, method: 'videos.list', entry: 'sent-1' });
    expect((await py.report({ credential: cred, entry: 'sent-1', outcome: 'sent' })).status).toBe(200);
    expect(await used()).toBe(before + 1);
  });

  it('answers 404 for an entry never spent or another client’s, 403 for an exhaustion without the right', async () => {
    const py = client(secrets['py-cron']);
    const php = client(secrets['php-cron']);
    expect((await py.report({ credential: cred, entry: 'never-spent', outcome: 'sent' })).status).toBe(404);
    await php.spend({ credential: cred, method: 'videos.list', entry: 'php-own' });
    expect((await py.report({ credential: cred, entry: 'php-own', outcome: 'never-sent' })).status).toBe(404);
    expect((await py.report({ credential: cred, entry: 'php-own', outcome: 'exhausted' })).status).toBe(403);
  });

  it('blocks the bucket for every client on a reported exhaustion, never past the next reset', async () => {
    const php = client(secrets['php-cron']);
    const py = client(secrets['py-cron']);
    await php.spend({ credential: cred, method: 'videos.list', entry: 'php-exhausted' });
    const r = await php.report({
      credential: cred,
      entry: 'php-exhausted',
      outcome: 'exhausted',
      until: new Date(Date.now() + 30 * DAY).toISOString(),
      reason: 'quotaExceeded',
    });
    expect(r.status).toBe(200);
    const next = await py.spend({ credential: cred, method: 'videos.list' });
    const b = next.body as { blockedUntilMs: number };
    expect(next.body).toMatchObject({ allowed: false, reason: 'blocked' });
    expect(b.blockedUntilMs).toBeLessThanOrEqual(Date.now() + DAY + 1000);
    await ledger.unblock(`qg:{${cred}}:units`);
  });
});

describe('POST /v1/runs', () => {
  it('records a run under the token’s name; the same id from another token is a conflict', async () => {
    const now = Date.now();
    const run = {
      credential: cred,
      id: 'nightly-1',
      job: 'trending:US',
      startedAt: now - 60_000,
      finishedAt: now - 1_000,
      outcome: 'done',
      pages: 4,
      units: 4,
      items: 200,
    };
    const r = await client(secrets['py-cron']).call('POST', '/v1/runs', run);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: 'nightly-1', replayed: false, client: 'py-cron', region: 'US' });
    const php = await client(secrets['php-cron']).call('POST', '/v1/runs', run);
    expect(php.status).toBe(409);
    expect(php.body).toMatchObject({ error: { code: 'QG_ENTRY_CONFLICT' } });
  });
});

describe('bodies it refuses', () => {
  it('answers 1,000 malformed or oversized bodies with a 4xx, never a 5xx, and records nothing', async () => {
    const before = await used();
    const big = JSON.stringify({ credential: cred, method: 'videos.list', tag: 'x'.repeat(9000) });
    const bodies: string[] = [
      '{',
      'null',
      '[]',
      '"spend"',
      '{"credential":1}',
      `{"credential":"${cred}"}`,
      `{"credential":"${cred}","method":"videos.list","cost":0}`,
      `{"credential":"${cred}","method":"videos.list","cost":1.5}`,
      `{"credential":"${cred}","method":"videos.list","tier":"gold"}`,
      `{"credential":"${cred}","method":"videos.list","entry":"has space"}`,
      `{"credential":"${cred}","method":"videos.list","extra":true}`,
      `{"credential":"${cred}","method":"no.such"}`,
      `{"credential":"nobody","method":"videos.list"}`,
      `{"credential":"${cred}","method":"videos.list","tag":"a\\u0000b"}`,
      `{"credential":"${cred}","bucket":"units","cost":99999999}`,
      big,
      '\u0000\u0001',
    ];
    const pool = Array.from({ length: 4 }, () => client(secrets['php-cron']));
    const ROUTES = ['/v1/spend', '/v1/report', '/v1/runs'];
    const statuses = new Map<number, number>();
    for (let i = 0; i < 1000; i += pool.length) {
      const answers = await Promise.all(
        pool.map((c, j) =>
          c.call('POST', ROUTES[(i / pool.length) % 3]!, undefined, bodies[(i + j) % bodies.length]),
        ),
      );
      for (const a of answers) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
    }
    for (const s of statuses.keys()) expect(s >= 400 && s < 500, `status ${s}`).toBe(true);
    expect(statuses.get(413)).toBeGreaterThan(0);
    expect(await used()).toBe(before);
  });

  it('names the field of a 400, the method or bucket the profile does not know included', async () => {
    const c = client(secrets['php-cron']);
    const cases: [Record<string, unknown>, string, string][] = [
      [{ credential: cred, method: 'videos.lst' }, 'QG_UNKNOWN_METHOD', 'method'],
      [{ credential: cred, bucket: 'unit', cost: 1 }, 'QG_UNKNOWN_BUCKET', 'bucket'],
      [{ credential: cred, method: 'videos.list', cost: '1' }, 'QG_INVALID_ARGUMENT', 'cost'],
      [{ credential: cred, bucket: 'units', cost: 99_999_999 }, 'QG_COST_EXCEEDS_LIMIT', 'cost'],
    ];
    for (const [body, code, field] of cases) {
      const r = await c.spend(body);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: { code, field } });
    }
  });

  it('answers other paths and methods with 404 and 405', async () => {
    const c = client(secrets['php-cron']);
    expect((await c.call('GET', '/v1/spend')).status).toBe(405);
    expect((await c.call('POST', '/v1/status', {})).status).toBe(405);
    expect((await c.call('GET', '/v1/nothing')).status).toBe(404);
  });
});

describe('GET /v1/status and the document', () => {
  it('reads the buckets of the credentials the token may use', async () => {
    const r = await client(secrets['py-cron']).call('GET', '/v1/status');
    expect(r.status).toBe(200);
    const b = r.body as {
      credentials: Array<{
        id: string;
        buckets: Array<{ id: string; bySite: Record<string, number>; byMethod: Record<string, number> }>;
      }>;
    };
    expect(b.credentials.map((c) => c.id)).toEqual([cred]);
    // Spends are attributed to the token that made them.
    const units = b.credentials[0]!.buckets.find((x) => x.id === 'units')!;
    expect(Object.keys(units.bySite)).toEqual(expect.arrayContaining(['php-cron', 'py-cron']));
    expect(units.byMethod['videos.list']).toBeGreaterThan(0);
    expect((await client(secrets['py-cron']).call('GET', `/v1/status?credential=${other}`)).status).toBe(403);
    const empty = await client(secrets['py-cron']).call('GET', '/v1/status?credential=');
    expect(empty.status).toBe(400);
    expect(empty.body).toMatchObject({ error: { code: 'QG_INVALID_ARGUMENT', field: 'credential' } });
  });

  it('records a late spend and voids an unused one (late.test.ts has the rest)', async () => {
    const c = client(secrets['py-cron']);
    const late = {
      credential: cred,
      method: 'videos.list',
      tag: 'trending:FR',
      entry: 'doc-late',
      at: Date.now(),
    };
    expect((await c.call('POST', '/v1/record', late)).body).toMatchObject({ outcome: 'recorded' });
    const unused = await c.call('POST', '/v1/void', { credential: cred, entry: 'doc-late' });
    expect(unused.body).toEqual({ entry: 'doc-late', outcome: 'refunded' });
  });

  it('every route of openapi.yaml was called and answered as it says', () => {
    expect(OPENAPI.openapi).toBe('3.1.0');
    for (const [path, ops] of Object.entries(OPENAPI.paths)) {
      for (const method of Object.keys(ops)) expect(seen).toContain(`${method.toUpperCase()} ${path} 200`);
    }
  });
});
