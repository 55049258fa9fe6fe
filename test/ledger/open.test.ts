import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  parseClusterUrl,
  parseSentinelUrl,
  parseStoreUrl,
  redactStoreUrl,
} from '../../src/config/store-url.js';
import { openLedger } from '../../src/index.js';
import { parseYouTubeConfig as parseConfig } from '../../src/youtube/config/part.js';

describe('openLedger URLs', () => {
  it('parses cluster URLs with credentials, several nodes and IPv6', () => {
    expect(parseClusterUrl('redis-cluster://u:p%40ss@10.0.0.1:7000,[::1]:7001/')).toEqual({
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '::1', port: 7001 },
      ],
      username: 'u',
      password: 'p@ss',
      tls: false,
    });
    expect(parseClusterUrl('rediss-cluster://h:1')).toMatchObject({
      tls: true,
      nodes: [{ host: 'h', port: 1 }],
    });
    expect(parseClusterUrl('redis-cluster://h1:7000,h2')).toBeUndefined();
    expect(parseClusterUrl('redis-cluster://')).toBeUndefined();
  });

  it("parses Sentinel URLs: the Sentinels, the primary name, the db, the servers' credentials", () => {
    expect(parseSentinelUrl('redis-sentinel://:pw@10.0.0.1:26379,[::1]:26380/quota/2')).toEqual({
      nodes: [
        { host: '10.0.0.1', port: 26379 },
        { host: '::1', port: 26380 },
      ],
      password: 'pw',
      tls: false,
      name: 'quota',
      db: 2,
    });
    expect(parseStoreUrl('rediss-sentinel://h:26379/mymaster')).toMatchObject({
      kind: 'redis',
      sentinel: { tls: true, name: 'mymaster', db: 0 },
    });
    expect(parseSentinelUrl('redis-sentinel://h:26379')).toBeUndefined(); // no primary name
    expect(redactStoreUrl('redis-sentinel://u:s3cret@h:26379/m')).toBe('redis-sentinel://u:***@h:26379/m');
  });

  it('waitReplicas needs one Redis or Sentinel: a config error on a Cluster or SQLite store', () => {
    for (const url of ['redis-cluster://h:7000', 'sqlite::memory:']) {
      expect(() => parseConfig({ store: { url, waitReplicas: 1 } }, { env: {} }), url).toThrow(
        /store\.waitReplicas: waits for Redis replicas/,
      );
    }
    expect(
      parseConfig(
        { store: { url: 'redis-sentinel://h:26379/m', waitReplicas: 1, waitTimeoutMs: '50ms' } },
        { env: {} },
      ).store,
    ).toMatchObject({ kind: 'redis', waitReplicas: 1, waitTimeoutMs: 50 });
  });

  it('rejects malformed store URLs with QG_STORE_URL_INVALID, without echoing the password', async () => {
    for (const url of ['redis-cluster://only-a-host', 'redis-sentinel://h:26379', 'ftp://x', '', 'sqlite:']) {
      await expect(openLedger(url), url).rejects.toMatchObject({
        code: 'QG_STORE_URL_INVALID',
        field: 'store',
      });
    }
    const err = (await openLedger('redis-cluster://user:hunter2@nohost').catch((e: unknown) => e)) as Error;
    expect(err.message).toContain('user:***@');
    expect(err.message).not.toContain('hunter2');
  });

  it('redacts passwords in URLs', () => {
    expect(redactStoreUrl('redis://:s3cret@h:6379/0')).toBe('redis://:***@h:6379/0');
    expect(redactStoreUrl('rediss://user:s3cret@h:6379')).toBe('rediss://user:***@h:6379');
    expect(redactStoreUrl('redis://h:6379')).toBe('redis://h:6379');
  });

  it('rejects an unreachable Redis quickly with QG_STORE_UNAVAILABLE', async () => {
    // Port 1 on loopback: nothing listens there, the connection is refused at once.
    const t0 = performance.now();
    await expect(openLedger('redis://127.0.0.1:1')).rejects.toMatchObject({ code: 'QG_STORE_UNAVAILABLE' });
    expect(performance.now() - t0).toBeLessThan(5000);
  });
});

describe('openLedger on a SQLite file that does not exist', () => {
  const dir = mkdtempSync(join(tmpdir(), 'qg-ledger-open-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.for([
    [{ create: false }, 'this command only reads'],
    [{ create: false, writes: true }, 'this command changes an existing ledger'],
  ] as const)('%o: QG_STORE_NOT_FOUND saying "%s", nothing created', async ([options, why]) => {
    const file = join(dir, 'nested', 'quota.db');
    const err = await openLedger(`sqlite:${file}`, options).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'QG_STORE_NOT_FOUND', details: { path: file } });
    expect((err as Error).message).toBe(`no SQLite ledger at '${file}' (nothing was created: ${why})`);
    expect(existsSync(join(dir, 'nested'))).toBe(false);
  });
});
