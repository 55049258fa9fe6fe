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
