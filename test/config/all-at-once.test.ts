/**
 * A config with several mistakes reports every one of them in one run, one line each: the schema's
 * (unknown keys) together with what resolving finds (a reserve too big for a bucket, a cron field
 * out of range, an unknown region or zone), so fixing one does not reveal the next.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cli, configFile } from '../cli/helpers.js';

beforeEach(() => {
  vi.stubEnv('LOG_LEVEL', 'silent');
  vi.stubEnv('QUOTA_GUARD_CONFIG', '');
});
afterEach(() => {
  vi.unstubAllEnvs();
});

const SIX_MISTAKES = [
  'regoins: [US]', // 1: unknown key
  'regions: [US, ZZ]', // 2: no such region
  'credentials:',
  '  - id: default',
  '    apikeyEnv: YT_KEY', // 3: unknown key (apiKeyEnv)
  '    timeZone: Mars/Olympus_Mons', // 4: no such zone
  '    reserve: 200', // 5: more than search.list's quota of 100 (videos.insert sets its own)
  '    buckets:',
  '      videos.insert: { reserve: 5 }',
  'schedules:',
  '  trending: { cron: "61 * * * *" }', // 6: minute out of range
  '',
].join('\n');

describe('config errors', () => {
  it('a config with six mistakes reports six lines at once', async () => {
    const file = configFile(SIX_MISTAKES);
    const out = await cli('plan', '--config', file);
    expect(out.code).toBe(78);
    const lines = out.stderr.trimEnd().split('\n');
    expect(lines, out.stderr).toHaveLength(6);
    for (const l of lines) expect(l).toMatch(/^quota-guard: .*\(QG_CONFIG_INVALID\)$/);
    const text = out.stderr;
    expect(text).toMatch(/regoins: unknown key/);
    expect(text).toMatch(/credentials\[0\]\.apikeyEnv: unknown key/);
    expect(text).toMatch(/regions\[1\].*ZZ/);
    expect(text).toMatch(/credentials\[0\]\.timeZone: unknown time zone 'Mars\/Olympus_Mons'/);
    // The credential-level reserve names the bucket it does not fit.
    expect(text).toMatch(
      /credentials\[0\]\.reserve: 200 must be less than the quota of bucket 'search\.list' \(100\)/,
    );
    // Our words for node-cron's "61 is a invalid expression for minute".
    expect(text).toMatch(
      /schedules\.trending\.cron: '61 \* \* \* \*': the minute field '61' is out of range or malformed \(0-59\)/,
    );
    expect(text).not.toMatch(/a invalid/);
    expect(text).not.toMatch(/\n\s+at /);
  });

  it('a value the schema refused is not reported again as what its default makes of it', async () => {
    // The stagger is refused; the default stands in for it while the rest is resolved, and only the
    // region is reported besides.
    const file = configFile('regions: [US, QQ]\nschedules:\n  trending: { stagger: -5m }\n');
    const out = await cli('plan', '--config', file);
    expect(out.code).toBe(78);
    const lines = out.stderr.trimEnd().split('\n');
    expect(lines, out.stderr).toHaveLength(2);
    expect(out.stderr).toMatch(/schedules\.trending\.stagger/);
    expect(out.stderr).toMatch(/QQ/);
  });
});
