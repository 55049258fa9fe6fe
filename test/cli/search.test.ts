import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openCache } from '../../src/youtube/cache/index.js';
import { cli, configFile, dir } from './helpers.js';

beforeEach(() => {
  vi.stubEnv('LOG_LEVEL', 'silent');
  vi.stubEnv('QUOTA_GUARD_CONFIG', '');
});

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('search arguments', () => {
  it('takes the query as several words, as a shell passes them unquoted', async () => {
    const cfg = configFile(`cache: { path: ${dir}/search-words-cache.db }\n`);
    openCache(`${dir}/search-words-cache.db`).close();
    const out = await cli('search', 'world', 'record', '--limit', '5', '--config', cfg);
    expect(out).toMatchObject({ code: 0, stderr: '' });
    expect(out.stdout).toBe(
      'no results for "world record": the cache is empty (run `quota-guard fetch` first)\n',
    );
    const json = await cli('search', '--json', '--config', cfg, '--', 'pokemon', '-minecraft');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout).hits).toEqual([]);
  });
});
