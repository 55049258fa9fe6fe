import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cli, configFile, dir } from './helpers.js';

beforeEach(() => {
  vi.stubEnv('LOG_LEVEL', 'silent');
  vi.stubEnv('QUOTA_GUARD_CONFIG', '');
  vi.stubEnv('QG_CLI_UNSET_KEY', '');
});

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('configuration errors on stderr', () => {
  it('end every line with the error code, so a wrapper can tell them apart', async () => {
    const paths = `store: sqlite:${dir}/codes-ledger.db\ncache: { path: ${dir}/codes-cache.db }\n`;
    const noKey = configFile(`${paths}credentials: [{ id: main, apiKeyEnv: QG_CLI_UNSET_KEY }]\n`);
    const missing = await cli('fetch', '--config', noKey);
    expect(missing.code).toBe(78);
    expect(missing.stderr).toMatch(/^quota-guard: .*QG_CLI_UNSET_KEY \(QG_MISSING_API_KEY\)\n$/);

    const region = await cli('search', 'music', '--region', 'ZZ', '--config', configFile(paths));
    expect(region.code).toBe(78);
    expect(region.stderr).toMatch(/^quota-guard: unknown region 'ZZ' .*\(QG_UNKNOWN_REGION\)\n$/);

    const bad = await cli('status', '--config', configFile(`${paths}maxSleep: soon\nfoo: 1\n`));
    expect(bad.code).toBe(78);
    const lines = bad.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).toMatch(/^quota-guard: .* \(QG_CONFIG_INVALID\)$/);
  });
});
