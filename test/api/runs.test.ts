/**
 * `POST /v1/runs` through a real `serve --decisions` over a real Redis and over an SQLite ledger:
 * a run recorded once under its id however often it is sent, a conflicting body, a token for
 * another credential and malformed bodies refused with nothing recorded, and `quota-guard history`
 * and the status page showing each run under the token's name. Every answer is checked against
 * docs/openapi.yaml.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import { cli } from '../cli/helpers.js';
import { tmpPath } from '../job-library/helpers.js';
import { ApiClient, historyRuns, type Served, startServe, tokensFile, writeConfig } from './helpers.js';

const STORES = [
  { name: 'Redis', store: () => inject('redisUrl') },
  { name: 'SQLite', store: () => `sqlite:${tmpPath('runs-ledger.db')}` },
];

describe.each(STORES)('POST /v1/runs over $name', ({ store }) => {
  const cred = `runs${randomBytes(4).toString('hex')}`;
  const other = `${cred}b`;
  let served: Served;
  let secrets: Record<string, string>;
  let config: string;
  const clients: ApiClient[] = [];

  function client(token: string): ApiClient {
    const c = new ApiClient(served.url, token);
    clients.push(c);
    return c;
  }

  /** The runs `quota-guard history --json` lists for the credential, newest first. */
  const history = () => historyRuns(config, '--credential', cred);

  const minutesAgo = (m: number) => Date.now() - m * 60_000;

  function body(over: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      credential: cred,
      id: `run-${randomBytes(6).toString('hex')}`,
      job: 'ingest:comments',
      startedAt: minutesAgo(3),
      finishedAt: minutesAgo(1),
      outcome: 'done',
      pages: 3,
      units: 2,
      items: 120,
      ...over,
    };
  }

  beforeAll(async () => {
    const t = tokensFile([
      { name: 'php-cron', credentials: [cred], tiers: ['scheduled'] },
      { name: 'elsewhere', credentials: [other], tiers: ['scheduled'] },
    ]);
    secrets = t.secrets;
    config = writeConfig({
      store: store(),
      credentials: [
        { id: cred, apiKeyEnv: 'QG_RUNS_TEST_KEY' },
        { id: other, apiKeyEnv: 'QG_RUNS_TEST_KEY' },
      ],
    });
    served = await startServe(config, ['--tokens', t.file]);
  });

  beforeEach(() => {
    vi.stubEnv('LOG_LEVEL', 'silent');
  });

  afterEach(() => {
    vi.unstubAllEnvs();
  });

  afterAll(async () => {
    for (const c of clients) await c.close();
    await served?.stop();
  });

  it('records a run once however often its id is sent, under the token’s name, with what the ledger holds', async () => {
    const php = client(secrets['php-cron']!);
    // Units the token spent before the run ends: the record reads them from the ledger.
    await php.spend({ credential: cred, bucket: 'units', cost: 7 });
    const b = body({ outcome: 'stopped', reason: 'budget, resume at 2026-11-24T08:00:00.000Z' });
    const first = await php.call('POST', '/v1/runs', b);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      id: b['id'],
      replayed: false,
      credential: cred,
      job: 'ingest:comments',
      client: 'php-cron',
      // A job the application does not know: no label (a `trending:US` job would be `{ region: 'US' }`).
      labels: {},
      startedAt: b['startedAt'],
      finishedAt: b['finishedAt'],
      outcome: 'stopped',
      pages: 3,
      units: 2,
      items: 120,
      reason: 'budget, resume at 2026-11-24T08:00:00.000Z',
      used: expect.objectContaining({ units: 7 }),
    });
    // Sent again (a retry after a lost answer), on this connection and on a fresh one.
    await php.spend({ credential: cred, bucket: 'units', cost: 1 });
    for (const c of [php, client(secrets['php-cron']!)]) {
      const again = await c.call('POST', '/v1/runs', b);
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ ...(first.body as object), replayed: true });
    }
    const runs = await history();
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({
      job: 'ingest:comments',
      client: 'php-cron',
      outcome: 'stopped',
      units: 2,
      videos: 120,
      reason: 'budget, resume at 2026-11-24T08:00:00.000Z',
      used: expect.objectContaining({ units: 7 }),
    });
    const text = await cli('history', '--credential', cred, '--config', config);
    expect(text.stdout).toMatch(/^started\s+credential\s+job\s+client\s+outcome\s/);
    expect(text.stdout).toMatch(/ingest:comments\s+php-cron\s+stopped/);
    // The status page's last runs say who recorded it.
    const page = await (await fetch(`${served.url}/`)).text();
    expect(page).toContain('<td>ingest:comments <span class="muted">by php-cron</span></td>');
  });

  it('is a 409 for the same id with another body, a 403 for a token of another credential, and records nothing', async () => {
    const php = client(secrets['php-cron']!);
    const b = body();
    expect((await php.call('POST', '/v1/runs', b)).status).toBe(200);
    const before = await history();
    const conflict = await php.call('POST', '/v1/runs', { ...b, units: 3 });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({ error: { code: 'QG_ENTRY_CONFLICT', field: 'id' } });
    const elsewhere = await client(secrets['elsewhere']!).call('POST', '/v1/runs', body());
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body).toMatchObject({ error: { code: 'forbidden' } });
    expect(await history()).toEqual(before);
  });

  it('answers malformed bodies with a 4xx and records nothing', async () => {
    const php = client(secrets['php-cron']!);
    const before = await history();
    const bad: Array<[Record<string, unknown> | string, number, string?]> = [
      ['{', 400],
      ['[]', 400, 'body'],
      [body({ credential: undefined }), 400, 'credential'],
      [body({ id: undefined }), 400, 'id'],
      [body({ id: 'has space' }), 400, 'id'],
      [body({ job: '' }), 400, 'job'],
      [body({ job: ' ' }), 400, 'job'],
      [body({ job: 'a|b' }), 400, 'job'],
      [body({ job: 'two\nlines' }), 400, 'job'],
      [body({ job: 'j'.repeat(101) }), 400, 'job'],
      [body({ outcome: 'great' }), 400, 'outcome'],
      [body({ startedAt: '2026-01-01' }), 400, 'startedAt'],
      [body({ finishedAt: undefined }), 400, 'finishedAt'],
      [body({ startedAt: minutesAgo(1), finishedAt: minutesAgo(2) }), 400, 'finishedAt'],
      [body({ finishedAt: Date.now() + 10 * 60_000 }), 400, 'finishedAt'],
      [body({ startedAt: minutesAgo(8 * 24 * 60) }), 400, 'startedAt'],
      [body({ pages: -1 }), 400, 'pages'],
      [body({ units: 1.5 }), 400, 'units'],
      [body({ items: '3' }), 400, 'items'],
      [body({ reason: 'one\nline only' }), 400, 'reason'],
      [body({ reason: 'r'.repeat(301) }), 400, 'reason'],
      [body({ extra: true }), 400, 'extra'],
      [body({ credential: 'nobody' }), 403],
      [JSON.stringify(body({ reason: 'x'.repeat(9000) })), 413],
    ];
    for (const [b, status, field] of bad) {
      const c = status === 413 ? client(secrets['php-cron']!) : php;
      const r = await c.call('POST', '/v1/runs', undefined, typeof b === 'string' ? b : JSON.stringify(b));
      expect(r.status, JSON.stringify(b).slice(0, 80)).toBe(status);
      if (field) expect((r.body as { error: { field?: string } }).error.field).toBe(field);
    }
    expect((await php.call('GET', '/v1/runs')).status).toBe(405);
    expect(await history()).toEqual(before);
  });
});
