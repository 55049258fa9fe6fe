/**
 * `defineConfig`: a config written in code gets the config file's types, and is checked and resolved
 * as a file is.
 */
import { describe, expect, it } from 'vitest';
import { type ConfigInput, defineConfig } from '../../src/config/define.js';
import { parseConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';

const env = { DRIVE_API_KEY: 'k' };

describe('defineConfig', () => {
  it('resolves a config written in code as parseConfig does the same object', () => {
    const input = {
      store: { url: 'sqlite::memory:', keyPrefix: 'drive:' },
      credentials: [
        {
          id: 'drive',
          apiKeyEnv: 'DRIVE_API_KEY',
          profile: 'youtube-classic',
          reserve: '5%',
          window: '24h',
        },
      ],
      maxSleep: '10s',
    } satisfies ConfigInput;
    const config = defineConfig(input, { env });
    expect(config.store).toMatchObject({ kind: 'sqlite', keyPrefix: 'drive:' });
    expect(config.maxSleepMs).toBe(10_000);
    expect(config.apiKey('drive')).toBe('k');
    expect(JSON.stringify(config)).toBe(JSON.stringify(parseConfig(input, { env })));
  });

  it('types what a file may hold: a misspelt key or a wrong kind of value does not compile', () => {
    const typos = () => {
      // @ts-expect-error `credentail` is no key of a config
      defineConfig({ credentail: [] });
      // @ts-expect-error a reserve is units or a percentage, not a flag
      defineConfig({ credentials: [{ id: 'a', reserve: true }] });
      // @ts-expect-error a fail mode is one of three words
      defineConfig({ storeDown: { default: 'sometimes' } });
    };
    // At run time they are the ConfigError a file gets.
    expect(typos).toThrow(ConfigError);
  });

  it('reports what only the whole config can tell as a file does, every problem at once', () => {
    const mistakes = () =>
      defineConfig(
        { credentials: [{ id: 'a', buckets: { units: { quota: 100, reserve: 200 } } }], maxSleep: -1 },
        { env },
      );
    expect(mistakes).toThrow(ConfigError);
    try {
      mistakes();
    } catch (e) {
      expect((e as ConfigError).problems.length).toBeGreaterThanOrEqual(2);
    }
  });
});
