/**
 * The decision API against input an attacker (or bad luck) chooses, through real `serve
 * --decisions` processes over SQLite and over Redis, one with a tokens file and one without (on
 * loopback), sharing the store:
 *
 * - every `Object.prototype` property name as a credential, bucket or method is a 4xx (the CLI:
 *   the unknown-name exit status, 78) and records nothing; as a token's name it is a name like any
 *   other;
 * - 1,000 bodies the schema refuses (null, wrong types, unknown fields, a key twice, the wrong
 *   content type) record nothing;
 * - a web page's request (an Origin, `text/plain`, `Sec-Fetch-Site`) and a foreign Host are refused
 *   and record nothing, unless the origin or the name is configured;
 * - a 401 and a 403 are logged with the token's name or "no token", never the token, and repeats
 *   are counted rather than repeated;
 * - a tag that starts with the token's name gets it once.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { cli } from '../cli/helpers.js';
import { tmpPath } from '../job-library/helpers.js';
import { ApiClient, historyRuns, type Served, startServe, tokensFile, writeConfig } from './helpers.js';

/** Every name an object inherits: each must be an unknown name, never Object's. */
const PROTO_NAMES = Object.getOwnPropertyNames(Object.prototype);

interface Raw {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/** One request with exactly these headers (Host included), on its own connection. */
function raw(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Raw> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        method,
        path,
        headers,
        setHost: headers['host'] === undefined,
        agent: false,
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => {
          text += d.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const code = (r: Raw): string | undefined => (JSON.parse(r.body) as { error?: { code: string } }).error?.code;

describe.each(['sqlite', 'redis'] as const)('the decision API on %s', (kind) => {
  const cred = `h${randomBytes(4).toString('hex')}`;
  let withTokens: Served;
  let local: Served;
  let config: string;
  let secrets: Record<string, string>;
  const clients: ApiClient[] = [];
  const client = (name?: string) => {
    const c = new ApiClient(withTokens.url, name === undefined ? undefined : secrets[name]);
    clients.push(c);
    return c;
  };

  /** Units in the credential's bucket, read through the API. */
  async function used(): Promise<number> {
    const r = await client('all').call('GET', `/v1/status?credential=${cred}`);
    const b = r.body as { credentials: Array<{ buckets: Array<{ id: string; used: number }> }> };
    return b.credentials[0]!.buckets.find((x) => x.id === 'units')!.used;
  }

  beforeAll(async () => {
    const t = tokensFile([
      { name: 'php-cron', credentials: [cred], tiers: ['scheduled'], mayBlock: true },
      { name: 'all', credentials: ['*'], tiers: ['scheduled', 'backfill', 'manual'], mayBlock: true },
      { name: 'quiet', credentials: [cred] },
      ...PROTO_NAMES.map((name) => ({ name, credentials: [cred] })),
    ]);
    secrets = t.secrets;
    config = writeConfig({
      store: kind === 'redis' ? inject('redisUrl') : `sqlite:${tmpPath('hostile.db')}`,
      credentials: [{ id: cred }],
    });
    withTokens = await startServe(config, [
      '--tokens',
      t.file,
      '--allow-origin',
      'https://admin.example',
      '--allow-host',
      'quota.internal',
    ]);
    local = await startServe(config);
  });

  afterAll(async () => {
    for (const c of clients) await c.close();
    await withTokens?.stop();
    await local?.stop();
  });

  it('answers every Object.prototype name as a credential, bucket or method with a 4xx and records nothing', async () => {
    const before = await used();
    const runsBefore = (await historyRuns(config)).length;
    const php = client('php-cron');
    const all = client('all');
    const now = Date.now();
    for (const name of PROTO_NAMES) {
      const asked: Array<
        [ApiClient, 'GET' | 'POST', string, Record<string, unknown> | undefined, number, string]
      > = [
        [all, 'POST', '/v1/spend', { credential: name, method: 'videos.list' }, 404, 'QG_UNKNOWN_CREDENTIAL'],
        [php, 'POST', '/v1/spend', { credential: cred, bucket: name, cost: 1 }, 400, 'QG_UNKNOWN_BUCKET'],
        [php, 'POST', '/v1/spend', { credential: cred, method: name }, 400, 'QG_UNKNOWN_METHOD'],
        [
          php,
          'POST',
          '/v1/record',
          { credential: cred, method: name, entry: 'p1', at: now },
          400,
          'QG_UNKNOWN_METHOD',
        ],
        [
          all,
          'POST',
          '/v1/record',
          { credential: name, bucket: 'units', entry: 'p1', at: now },
          404,
          'QG_UNKNOWN_CREDENTIAL',
        ],
        [all, 'POST', '/v1/void', { credential: name, entry: 'p1' }, 404, 'QG_UNKNOWN_CREDENTIAL'],
        [all, 'POST', '/v1/report', { credential: name, entry: 'p1', outcome: 'sent' }, 404, ''],
        [
          all,
          'POST',
          '/v1/runs',
          { credential: name, id: 'r1', job: 'j', startedAt: now - 1000, finishedAt: now, outcome: 'done' },
          404,
          'QG_UNKNOWN_CREDENTIAL',
        ],
        [
          all,
          'GET',
          `/v1/status?credential=${encodeURIComponent(name)}`,
          undefined,
          404,
          'QG_UNKNOWN_CREDENTIAL',
        ],
        [php, 'POST', '/v1/spend', { credential: name, method: 'videos.list' }, 403, 'forbidden'],
      ];
      for (const [c, method, path, body, status, errorCode] of asked) {
        const r = await c.call(method, path, body);
        expect(r.status, `${name}: ${method} ${path} ${JSON.stringify(body)}`).toBe(status);
        if (errorCode) expect(r.body, `${name}: ${path}`).toMatchObject({ error: { code: errorCode } });
      }
    }
    // The known names are listed, as for any unknown name.
    const b = await php.spend({ credential: cred, bucket: 'constructor', cost: 1 });
    expect((b.body as { error: { message: string } }).error.message).toMatch(/has units/);
    expect(await used()).toBe(before);
    expect(await historyRuns(config)).toHaveLength(runsBefore);

    // The CLI: the one line and exit status of any unknown name, never a stack.
    for (const name of PROTO_NAMES) {
      for (const args of [
        ['spend', cred, '--bucket', name, '--cost', '1'],
        ['spend', cred, '--method', name],
        ['spend', name, '--cost', '1'],
        ['unblock', cred, name],
      ]) {
        const r = await cli(...args, '--config', config);
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(78);
        expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
        expect(r.stderr).toMatch(
          /unknown (bucket|method|credential) '.*' .*\(QG_UNKNOWN_(BUCKET|METHOD|CREDENTIAL)\)/,
        );
      }
    }
    expect(await used()).toBe(before);
  });

  it('takes every Object.prototype name as a token’s name like any other', async () => {
    const before = await used();
    for (const name of PROTO_NAMES) {
      const c = client(name);
      const r = await c.spend({
        credential: cred,
        method: 'videos.list',
        tag: 'site',
        entry: `own-${PROTO_NAMES.indexOf(name)}`,
      });
      expect(r.status, name).toBe(200);
      expect(r.body, name).toMatchObject({ allowed: true, tag: `${name}:site:videos.list` });
      // Its own entry is its own.
      const sent = await c.report({
        credential: cred,
        entry: `own-${PROTO_NAMES.indexOf(name)}`,
        outcome: 'sent',
      });
      expect(sent.status, name).toBe(200);
    }
    expect(await used()).toBe(before + PROTO_NAMES.length);
    const status = await client('all').call('GET', `/v1/status?credential=${cred}`);
    const units = (
      status.body as {
        credentials: Array<{ buckets: Array<{ id: string; bySite: Record<string, number> }> }>;
      }
    ).credentials[0]!.buckets.find((x) => x.id === 'units')!;
    for (const name of PROTO_NAMES)
      expect(Object.hasOwn(units.bySite, name) && units.bySite[name], name).toBe(1);
  });

  it('records nothing for 1,000 bodies the schema refuses', async () => {
    const before = await used();
    const runsBefore = (await historyRuns(config)).length;
    const now = Date.now();
    const run = {
      credential: cred,
      id: 'bad-run',
      job: 'ingest',
      startedAt: now - 5000,
      finishedAt: now,
      outcome: 'done',
    };
    const spend = `{"credential":"${cred}","method":"videos.list"`;
    const bodies: Array<[string, string, string?]> = [
      ['/v1/spend', `${spend},"tier":null}`],
      ['/v1/spend', `${spend},"cost":null}`],
      ['/v1/spend', `${spend},"tag":null}`],
      ['/v1/spend', `${spend},"entry":null}`],
      ['/v1/spend', `${spend},"allowUnknown":null}`],
      ['/v1/spend', `{"credential":null,"method":"videos.list"}`],
      ['/v1/spend', `${spend},"cost":"1"}`],
      ['/v1/spend', `${spend},"cost":1e400}`],
      ['/v1/spend', `${spend},"tier":["scheduled"]}`],
      ['/v1/spend', `${spend},"units":1}`],
      ['/v1/spend', `${spend},"__proto__":{"cost":500}}`],
      ['/v1/spend', `${spend},"cost":1,"cost":500}`],
      ['/v1/spend', `{"credential":"${cred}","credential":"other","method":"videos.list"}`],
      ['/v1/spend', `${spend}}`, 'text/plain'],
      ['/v1/spend', `${spend}}`, 'application/x-www-form-urlencoded'],
      ['/v1/spend', `${spend}}`, 'application/json; charset=latin1'],
      ['/v1/spend', `${spend}}`, ''],
      ['/v1/spend', `${spend},}`],
      ['/v1/spend', `${spend}} {}`],
      ['/v1/record', `{"credential":"${cred}","bucket":"units","entry":"x1","at":null}`],
      ['/v1/record', `{"credential":"${cred}","bucket":"units","entry":"x1","at":${now},"at":1}`],
      ['/v1/runs', JSON.stringify({ ...run, pages: null })],
      ['/v1/runs', JSON.stringify({ ...run, units: null })],
      ['/v1/runs', JSON.stringify({ ...run, items: null })],
      ['/v1/runs', JSON.stringify({ ...run, reason: null })],
      ['/v1/runs', JSON.stringify({ ...run, videos: 3 })],
      ['/v1/runs', `${JSON.stringify(run).slice(0, -1)},"outcome":"failed"}`],
      ['/v1/report', `{"credential":"${cred}","entry":"e1","outcome":null}`],
      ['/v1/report', `{"credential":"${cred}","entry":"e1","outcome":"sent","until":null}`],
      ['/v1/void', `{"credential":"${cred}","entry":null}`],
    ];
    const statuses = new Map<number, number>();
    const auth = `Bearer ${secrets['all']}`;
    for (let i = 0; i < 1000; i += 10) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, j) => {
          const [path, body, type] = bodies[(i + j) % bodies.length]!;
          return raw(
            withTokens.url,
            'POST',
            path,
            { authorization: auth, 'content-type': type ?? 'application/json' },
            body,
          );
        }),
      );
      for (const a of answers) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
    }
    expect([...statuses.keys()].sort()).toEqual([400, 415]);
    expect(await used()).toBe(before);
    expect(await historyRuns(config)).toHaveLength(runsBefore);
  });

  it('refuses a web page’s requests and foreign Host names, with or without tokens, and records nothing', async () => {
    const before = await used();
    const page = { origin: 'http://evil.example', 'content-type': 'text/plain' };
    const body = JSON.stringify({ credential: cred, method: 'videos.list' });
    const { port } = new URL(withTokens.url);
    const auth = { authorization: `Bearer ${secrets['php-cron']}` };
    for (const [served, headers] of [
      [local, {}],
      [withTokens, auth],
    ] as const) {
      const h = (more: Record<string, string>) => ({ ...headers, ...more });
      // A page's simple POST (no preflight needed), and a fetch with a JSON type.
      expect(code(await raw(served.url, 'POST', '/v1/spend', h(page), body))).toBe('origin_refused');
      expect(
        code(
          await raw(
            served.url,
            'POST',
            '/v1/spend',
            h({ origin: 'null', 'content-type': 'application/json' }),
            body,
          ),
        ),
      ).toBe('origin_refused');
      expect(
        code(
          await raw(
            served.url,
            'POST',
            '/v1/spend',
            h({ 'sec-fetch-site': 'cross-site', 'content-type': 'application/json' }),
            body,
          ),
        ),
      ).toBe('origin_refused');
      // An exhausted report, the way a page would block a bucket for every job.
      const report = JSON.stringify({ credential: cred, entry: 'nope', outcome: 'exhausted' });
      expect((await raw(served.url, 'POST', '/v1/report', h(page), report)).status).toBe(403);
      // Without an Origin, a text/plain body is still not JSON to the API.
      expect(
        (await raw(served.url, 'POST', '/v1/spend', h({ 'content-type': 'text/plain' }), body)).status,
      ).toBe(415);
      // DNS rebinding: the page's own name in Host.
      const rebound = await raw(served.url, 'GET', '/v1/status', h({ host: `rebind.evil.example:${port}` }));
      expect(rebound.status).toBe(403);
      expect(code(rebound)).toBe('host_refused');
      for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, 'localhost']) {
        expect((await raw(served.url, 'GET', '/v1/status', h({ host }))).status, host).toBe(200);
      }
      // A browser navigating to the API itself says Sec-Fetch-Site: none.
      expect((await raw(served.url, 'GET', '/v1/status', h({ 'sec-fetch-site': 'none' }))).status).toBe(200);
    }
    // Configured: a name it serves, and an origin whose pages may call it (with CORS).
    expect(
      (await raw(withTokens.url, 'GET', '/v1/status', { ...auth, host: 'Quota.Internal.' })).status,
    ).toBe(200);
    expect((await raw(local.url, 'GET', '/v1/status', { host: 'quota.internal' })).status).toBe(403);
    const pre = await raw(withTokens.url, 'OPTIONS', '/v1/spend', {
      origin: 'https://admin.example',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type',
    });
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe('https://admin.example');
    const admin = await raw(
      withTokens.url,
      'POST',
      '/v1/spend',
      { ...auth, origin: 'https://admin.example', 'content-type': 'application/json' },
      body,
    );
    expect(admin.status).toBe(200);
    expect(admin.headers['access-control-allow-origin']).toBe('https://admin.example');
    expect((await raw(local.url, 'OPTIONS', '/v1/spend', { origin: 'https://admin.example' })).status).toBe(
      403,
    );
    // Only the admin page's spend was recorded; no bucket was blocked.
    expect(await used()).toBe(before + 1);
    const status = await client('all').call('GET', `/v1/status?credential=${cred}`);
    const units = (
      status.body as { credentials: Array<{ buckets: Array<{ id: string; blockedUntil?: string }> }> }
    ).credentials[0]!.buckets.find((x) => x.id === 'units')!;
    expect(units.blockedUntil ?? null).toBeNull();
  });

  it('logs a 401 and a 403 with the token’s name or "no token", never the token, and counts repeats', async () => {
    // A token of its own: the same refusal of another test within 10 s would be counted into that one's line.
    const wrong = new ApiClient(withTokens.url, 'not-a-token-of-the-file');
    clients.push(wrong);
    for (let i = 0; i < 30; i++) expect((await wrong.call('GET', '/v1/status')).status).toBe(401);
    expect((await client().call('GET', '/v1/status')).status).toBe(401);
    const quiet = client('quiet');
    expect((await quiet.spend({ credential: cred, method: 'videos.list', tier: 'manual' })).status).toBe(403);
    // The child's log reaches this process through a pipe: wait for the last line.
    for (let i = 0; i < 100 && !withTokens.stderr().includes("refused token 'quiet'"); i++) await sleep(20);
    const err = withTokens.stderr();
    const lines = err.split('\n');
    expect(lines.filter((l) => l.includes('refused an unknown token (401 unauthorized)'))).toHaveLength(1);
    expect(lines.filter((l) => l.includes('refused no token (401 unauthorized)'))).toHaveLength(1);
    expect(err).toMatch(
      /"why":"token 'quiet' may not spend the manual tier".*refused token 'quiet' \(403 forbidden\)/,
    );
    expect(err).not.toContain('not-a-token-of-the-file');
    for (const secret of Object.values(secrets)) expect(err).not.toContain(secret);
  });

  it('writes the token’s name once when the tag starts with it', async () => {
    const php = client('php-cron');
    const r = await php.spend({
      credential: cred,
      method: 'videos.list',
      tag: 'php-cron:trending:US',
      entry: 'once-1',
    });
    expect(r.body).toMatchObject({ allowed: true, tag: 'php-cron:trending:US:videos.list' });
    expect((await php.report({ credential: cred, entry: 'once-1', outcome: 'never-sent' })).status).toBe(200);
    const plain = await php.spend({ credential: cred, method: 'videos.list', tag: 'trending:US' });
    expect(plain.body).toMatchObject({ tag: 'php-cron:trending:US:videos.list' });
  });
});
