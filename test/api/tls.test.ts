/**
 * `serve --decisions --tls-cert --tls-key`: the decision API over HTTPS with a certificate from a
 * file (made here with Debian's openssl; skipped, saying why, where there is none).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { Pool } from 'undici';
import { expect, inject, it } from 'vitest';
import { cli, configFile, sqliteStore } from '../cli/helpers.js';
import { tmpPath } from '../job-library/helpers.js';
import { startServe, tokensFile, writeConfig } from './helpers.js';

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A self-signed certificate for 127.0.0.1 and its key, made with openssl. */
function certificate(name: string): { cert: string; key: string } {
  const cert = tmpPath(`${name}-cert.pem`);
  const key = tmpPath(`${name}-key.pem`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  );
  return { cert, key };
}

it.skipIf(!hasOpenssl())('serves the decision API over HTTPS from a certificate and key file', async () => {
  const { cert, key } = certificate('ok');
  const cred = `tls${randomBytes(4).toString('hex')}`;
  const t = tokensFile([{ name: 'tls-job', credentials: [cred], tiers: ['scheduled'] }]);
  const config = writeConfig({ store: inject('redisUrl'), credentials: [{ id: cred }] });
  const served = await startServe(config, ['--tokens', t.file, '--tls-cert', cert, '--tls-key', key]);
  const pool = new Pool(served.url, { connect: { ca: readFileSync(cert) } });
  try {
    expect(served.url).toMatch(/^https:/);
    const r = await pool.request({
      method: 'POST',
      path: '/v1/spend',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${t.secrets['tls-job']}` },
      body: JSON.stringify({ credential: cred, method: 'videos.list', tag: 'tls' }),
    });
    expect(r.statusCode).toBe(200);
    expect(await r.body.json()).toMatchObject({ allowed: true, tag: 'tls-job:tls:videos.list' });
  } finally {
    await pool.close();
    await served.stop();
  }
});

it.skipIf(!hasOpenssl())(
  'refuses a key that is not the certificate’s, or a file that is not PEM: one line, exit 78, nothing created',
  async () => {
    const a = certificate('a');
    const b = certificate('b');
    const store = sqliteStore();
    const config = configFile(`store: ${store}\ncredentials:\n  - id: default\n`);
    const serve = (cert: string, key: string) =>
      cli(
        'serve',
        '--config',
        config,
        '--http',
        '127.0.0.1:0',
        '--decisions',
        '--tls-cert',
        cert,
        '--tls-key',
        key,
      );
    const mismatch = await serve(a.cert, b.key);
    expect(mismatch.code).toBe(78);
    expect(mismatch.stderr).toBe(
      `quota-guard: --tls-key '${b.key}' is not the key of the certificate in --tls-cert '${a.cert}' (QG_CONFIG_INVALID)\n`,
    );
    const notPem = await serve(a.cert, config);
    expect(notPem.code).toBe(78);
    expect(notPem.stderr).toMatch(
      /^quota-guard: --tls-key '.*' cannot be used as a private key \(.*\) \(QG_CONFIG_INVALID\)\n$/,
    );
    const certNotPem = await serve(config, a.key);
    expect(certNotPem.code).toBe(78);
    expect(certNotPem.stderr).toMatch(/^quota-guard: --tls-cert '.*' cannot be used as a certificate/);
    expect(existsSync(store.slice('sqlite:'.length))).toBe(false);
  },
);
