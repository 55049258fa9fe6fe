/**
 * Mistakes an operator makes at 3 a.m., each one line and exit 78 before anything connects: a
 * mistyped LOG_LEVEL, a config path that is a device, a FIFO, a directory or a huge file, and a
 * window the ledger would refuse.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { cli, configFile, dir, expectOneLine } from '../cli/helpers.js';

beforeEach(() => {
  vi.stubEnv('LOG_LEVEL', 'silent');
  vi.stubEnv('QUOTA_GUARD_CONFIG', '');
});
afterEach(() => {
  vi.unstubAllEnvs();
});

describe('LOG_LEVEL', () => {
  // A TCP server standing in for Redis: it counts the connections it gets (there must be none).
  let server: Server;
  let connections = 0;
  let port = 0;
  beforeAll(async () => {
    server = createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it.each([
    ['status'],
    ['spend', 'default', '--cost', '1'],
    ['fetch'],
    ['history'],
  ])('a mistyped level: `%s` prints one line, exits 78 and never connects', async (...cmd) => {
    vi.stubEnv('LOG_LEVEL', 'warning');
    const cfg = configFile(`store: redis://127.0.0.1:${port}\n`);
    const out = await cli(...cmd, '--config', cfg);
    expect(out.code).toBe(78);
    expectOneLine(
      out.stderr,
      /^quota-guard: LOG_LEVEL: 'warning' is not a log level \(use one of .*warn.*\)/,
    );
    expect(connections).toBe(0);
  });

  it('a valid level works as before', async () => {
    vi.stubEnv('LOG_LEVEL', 'warn');
    const out = await cli('plan', '--config', configFile('regions: [US]\n'));
    expect(out.stderr).toBe('');
  });
});

describe('the config file', () => {
  it('a device, a FIFO or a directory is refused at once, unread', async () => {
    const fifo = join(dir, 'config.fifo');
    execFileSync('mkfifo', [fifo]);
    for (const [file, what] of [
      ['/dev/zero', 'a device, FIFO or socket'],
      [fifo, 'a device, FIFO or socket'],
      [dir, 'a directory'],
    ] as const) {
      const out = await cli('plan', '--config', file);
      expect(out.code).toBe(78);
      expectOneLine(out.stderr, new RegExp(`: not a regular file \\(${what}\\) \\(QG_CONFIG_INVALID\\)$`));
    }
  });

  it('a file over 1 MiB is refused before it is parsed; 1 MiB exactly is read', async () => {
    const big = join(dir, 'big.yaml');
    writeFileSync(big, `# ${'x'.repeat(2 ** 20 - 3)}\nregions: [US]\n`);
    const out = await cli('plan', '--config', big);
    expect(out.code).toBe(78);
    expectOneLine(
      out.stderr,
      /big\.yaml: config file is 1,048,590 bytes; a config file may have at most 1 MiB/,
    );
    const fits = join(dir, 'fits.yaml');
    const body = 'regions: [US]\n';
    writeFileSync(fits, `#${'x'.repeat(2 ** 20 - body.length - 2)}\n${body}`);
    const ok = await cli('plan', '--config', fits);
    expect(ok.stderr).not.toMatch(/1 MiB/);
    expect([0, 65]).toContain(ok.code);
  });
});

describe('windows the ledger would refuse', () => {
  it.each([
    ['credentials: [{ id: a, window: 100000000h }]', 'credentials[0].window: must be at most 11574d 1h'],
    [
      'credentials: [{ id: a, buckets: { units: { window: 1.5 } } }]',
      'credentials[0].buckets.units.window: must be a whole number of milliseconds',
    ],
    [
      'budgets: [{ id: b, bucket: units, limit: 5, window: 40000y }]',
      'budgets[0].window: must be a duration',
    ],
    ['budgets: [{ id: b, bucket: units, limit: 5, window: 12000d }]', 'budgets[0].window: must be at most'],
    [
      'credentials: [{ id: a, pace: { limit: 5, window: 0.25 } }]',
      'credentials[0].pace.window: must be a whole number of milliseconds',
    ],
  ])('%s: `plan` exits 78 instead of passing', async (yaml, message) => {
    const out = await cli('plan', '--config', configFile(`${yaml}\n`));
    expect(out.code).toBe(78);
    expect(out.stderr).toContain(message);
  });
});
