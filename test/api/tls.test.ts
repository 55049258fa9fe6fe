/**
 * `serve --decisions --tls-cert --tls-key`: the decision API over HTTPS with a certificate from a
 * file (made here with Debian's openssl; skipped, saying why, where there is none).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';
import { expect, inject, it } from 'vitest';
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

it.skipIf(!hasOpenssl())('serves the decision API over HTTPS from a certificate and key file', async () => {
  const cert = tmpPath('cert.pem');
  const key = tmpPath('key.pem');
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
