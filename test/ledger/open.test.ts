import { describe, expect, it } from 'vitest';
import { parseClusterUrl, redactStoreUrl } from '../../src/config/store-url.js';
import { openLedger } from '../../src/index.js';

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

  it('rejects malformed store URLs with QG_STORE_URL_INVALID, without echoing the password', async () => {
    for (const url of ['redis-cluster://only-a-host', 'ftp://x', '', 'sqlite:']) {
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
