/**
 * The tokens file: hashes only, read again when it changes, a broken change keeps the tokens in
 * force, and the decision API refuses to serve beyond loopback without one.
 */
import { createHash } from 'node:crypto';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseTokens, TokenFile } from '../../src/api/index.js';
import { cli, configFile, sqliteStore } from '../cli/helpers.js';
import { tmpPath } from '../job-library/helpers.js';

const hash = (t: string) => createHash('sha256').update(t).digest('hex');
const yaml = (name: string, token: string) =>
  `tokens:\n  - name: ${name}\n    sha256: ${hash(token)}\n    credentials: [default]\n    tiers: [scheduled]\n`;

describe('tokens file', () => {
  it('is read again when it changes, and a broken change keeps the tokens in force', () => {
    const file = tmpPath('tokens.yaml');
    writeFileSync(file, yaml('first', 'secret-one'));
    const errors: string[] = [];
    const logger = {
      info() {},
      warn() {},
      debug() {},
      error: (o: object, m: string) => errors.push(`${m} ${JSON.stringify(o)}`),
      child: () => logger,
    };
    const tokens = new TokenFile(file, logger);
    expect(tokens.authenticate('secret-one')?.name).toBe('first');
    expect(tokens.authenticate('secret-two')).toBeUndefined();

    writeFileSync(file, yaml('second', 'secret-two-longer'));
    tokens.recheck();
    expect(tokens.authenticate('secret-two-longer')).toMatchObject({
      name: 'second',
      tiers: ['scheduled'],
      mayBlock: false,
    });
    expect(tokens.authenticate('secret-one')).toBeUndefined();

    writeFileSync(file, 'tokens: [ { name: broken');
    tokens.recheck();
    expect(tokens.authenticate('secret-two-longer')?.name).toBe('second');
    expect(errors).toHaveLength(1);

    // Removed (an editor's save, a config-management run): said once, and read again when back.
    rmSync(file);
    tokens.recheck();
    expect(tokens.authenticate('secret-two-longer')?.name).toBe('second');
    tokens.recheck();
    expect(tokens.authenticate('secret-two-longer')?.name).toBe('second');
    expect(errors).toHaveLength(2);
    expect(errors[1]).toMatch(/cannot be used.*cannot be read/);
    writeFileSync(file, yaml('third', 'secret-three'));
    tokens.recheck();
    expect(tokens.authenticate('secret-three')?.name).toBe('third');
    expect(tokens.authenticate('secret-two-longer')).toBeUndefined();
    expect(errors.join()).not.toContain('secret');
  });

  it('names what is wrong with an entry, never a token', () => {
    expect(() =>
      parseTokens('t.yaml', 'tokens:\n  - name: x\n    sha256: abc\n    credentials: [default]\n'),
    ).toThrow(/tokens\[0\]\.sha256 must be the token's SHA-256/);
    expect(() =>
      parseTokens(
        't.yaml',
        `tokens:\n  - name: x\n    sha256: ${hash('a')}\n    credentials: [default]\n    tiers: [gold]\n`,
      ),
    ).toThrow(/tokens\[0\]\.tiers/);
    expect(() => parseTokens('t.yaml', 'nothing: here\n')).toThrow(/must have a `tokens:` list/);
  });
});

describe('serve --decisions beyond loopback', () => {
  it('refuses to start without a tokens file (exit 78), before opening anything', async () => {
    const store = sqliteStore();
    const cfg = configFile(`store: ${store}\ncredentials:\n  - id: default\n`);
    const r = await cli('serve', '--config', cfg, '--http', '0.0.0.0:0', '--decisions');
    expect(r.code).toBe(78);
    expect(existsSync(store.slice('sqlite:'.length))).toBe(false);
    expect(r.stderr).toMatch(
      /the decision API serves beyond loopback \(0\.0\.0\.0\) only with bearer tokens/,
    );
  });
});

describe('a tokens file that names what the config does not have', () => {
  it('refuses an unknown credential or a misspelt field at start: one line, exit 78, nothing created', async () => {
    const store = sqliteStore();
    const cfg = configFile(`store: ${store}\ncredentials:\n  - id: default\n`);
    const file = tmpPath('unknown-credential.yaml');
    writeFileSync(
      file,
      `tokens:\n  - name: cron\n    sha256: ${hash('s')}\n    credentials: [default, constructor]\n`,
    );
    const r = await cli('serve', '--config', cfg, '--http', '127.0.0.1:0', '--decisions', '--tokens', file);
    expect(r.code).toBe(78);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(
      /tokens\[0\]\.credentials: unknown credential 'constructor' \(configured: default\)/,
    );
    expect(existsSync(store.slice('sqlite:'.length))).toBe(false);
    writeFileSync(
      file,
      `tokens:\n  - name: cron\n    sha256: ${hash('s')}\n    credentials: ['*']\n    maybBlock: true\n`,
    );
    const typo = await cli(
      'serve',
      '--config',
      cfg,
      '--http',
      '127.0.0.1:0',
      '--decisions',
      '--tokens',
      file,
    );
    expect(typo.code).toBe(78);
    expect(typo.stderr).toMatch(/tokens\[0\]: 'maybBlock' is not a field of a token/);
    expect(existsSync(store.slice('sqlite:'.length))).toBe(false);
  });

  it('keeps the tokens in force when a change names an unknown credential', () => {
    const file = tmpPath('reload-unknown.yaml');
    writeFileSync(file, yaml('first', 'secret-one'));
    const errors: string[] = [];
    const logger = {
      info() {},
      warn() {},
      error: (o: object, m: string) => errors.push(`${m} ${JSON.stringify(o)}`),
    };
    const tokens = new TokenFile(file, logger, ['default']);
    writeFileSync(file, yaml('first', 'secret-one').replace('[default]', '[default, elsewhere]'));
    tokens.recheck();
    expect(tokens.authenticate('secret-one')?.credentials).toEqual(['default']);
    expect(errors.join()).toMatch(/unknown credential 'elsewhere'/);
  });
});

describe('run --decisions beyond loopback', () => {
  it('refuses to start without a tokens file (exit 78) before creating the ledger or the cache', async () => {
    const data = tmpPath('run-data');
    const cfg = configFile(
      `store: sqlite:${data}/quota.db\ncache: { path: ${data}/cache.db }\ncredentials:\n  - id: default\n    apiKeyEnv: QG_RUN_TEST_KEY\n`,
    );
    process.env['QG_RUN_TEST_KEY'] = 'k';
    const r = await cli('run', '--config', cfg, '--http', '0.0.0.0:0', '--decisions');
    delete process.env['QG_RUN_TEST_KEY'];
    expect(r.code).toBe(78);
    expect(r.stderr).toMatch(
      /the decision API serves beyond loopback \(0\.0\.0\.0\) only with bearer tokens/,
    );
    expect(existsSync(`${data}/quota.db`)).toBe(false);
    expect(existsSync(`${data}/cache.db`)).toBe(false);
  });
});
