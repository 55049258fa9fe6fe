/**
 * Proof: `rediss://` works against a TLS redis-server whose certificate the test makes (a CA and a
 * server certificate for 127.0.0.1, by openssl). The CLI trusts the CA through Node's own
 * NODE_EXTRA_CA_CERTS; without it the certificate is refused and the command says so in one line.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, type RedisServer, startRedisServer } from '../harness/redis.js';
import { configFile, runChild } from './helpers.js';

let dir: string;
let server: RedisServer;
let tlsPort: number;

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'qg-tls-'));
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '2',
    '-subj',
    '/CN=qg test CA',
  );
  openssl('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  openssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.crt',
    '-days',
    '2',
    '-extfile',
    'san.ext',
  );
  tlsPort = await freePort();
  // The plain port stays for the harness's readiness check; the test speaks TLS only.
  server = await startRedisServer([
    '--tls-port',
    String(tlsPort),
    '--tls-cert-file',
    join(dir, 'server.crt'),
    '--tls-key-file',
    join(dir, 'server.key'),
    '--tls-ca-cert-file',
    join(dir, 'ca.crt'),
    '--tls-auth-clients',
    'no',
  ]);
});

beforeAll(() => {
  execFileSync('redis-cli', ['-p', String(server.port), 'CONFIG', 'SET', 'requirepass', 'tls-s3cret-pw']);
});

afterAll(async () => {
  await server?.stop();
  if (server) rmSync(server.dir, { recursive: true, force: true });
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('rediss:// against a TLS redis-server', () => {
  it('spends and reads over TLS with the CA trusted; without it, one line and exit 78', async () => {
    const file = configFile({ store: `rediss://:tls-s3cret-pw@127.0.0.1:${tlsPort}` });
    const env = { LOG_LEVEL: 'silent', NODE_EXTRA_CA_CERTS: join(dir, 'ca.crt') };
    const spend = await runChild(['spend', 'default', '--cost', '7', '--config', file], env);
    expect(spend.stderr).toBe('');
    expect(spend).toMatchObject({ code: 0 });
    expect(spend.stdout).toMatch(/^allowed: 7 units of default\/units/);
    const status = await runChild(['status', '--json', '--config', file], env);
    expect(status.code).toBe(0);
    expect(JSON.stringify(JSON.parse(status.stdout))).toMatch(/"used":7\b/);

    const untrusted = await runChild(['status', '--config', file], { LOG_LEVEL: 'silent' });
    // A certificate Node does not trust is a configuration problem (78), not an outage to wait out.
    expect(untrusted.code).toBe(78);
    expect(untrusted.stderr).toMatch(
      /^quota-guard: Redis ledger at 127\.0\.0\.1:\d+: connect: the server's TLS certificate is not trusted \(.+\); give Node the CA .*NODE_EXTRA_CA_CERTS.*\(QG_CONFIG_INVALID\)\n$/,
    );
    for (const r of [spend, status, untrusted]) expect(r.stdout + r.stderr).not.toContain('tls-s3cret-pw');
  }, 30_000);
});
