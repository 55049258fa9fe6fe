import { describe, expect, it } from 'vitest';
import { parseTag, siteOf, spendTag, withMethod } from '../../src/guard/tags.js';
import { getProfile } from '../../src/profiles/profiles.js';

const methods = getProfile('youtube-2026').methods;

describe('spend tags', () => {
  it('reads back the site, region and method a job writes', () => {
    const trending = spendTag('trending', 'US', 'videos.list');
    expect(trending).toBe('trending:US:videos.list');
    expect(siteOf(trending)).toBe('trending');
    expect(parseTag(trending, methods)).toEqual({ region: 'US', method: 'videos.list' });
    const backfill = spendTag('backfill', 'videos.batchGetStats');
    expect(siteOf(backfill)).toBe('backfill');
    expect(parseTag(backfill, methods)).toEqual({ method: 'videos.batchGetStats' });
  });

  it('ignores what it does not recognise in a tag a person wrote', () => {
    expect(siteOf('spend:cli')).toBe('spend');
    expect(parseTag('nightly:us:videos.fly', methods)).toEqual({});
    expect(siteOf('')).toBe('');
  });

  it('adds the method a spend was for to a tag that does not name it, so status can split by method', () => {
    expect(withMethod('php-cron:trending:US', 'videos.list')).toBe('php-cron:trending:US:videos.list');
    expect(parseTag(withMethod('php-cron:trending:US', 'videos.list'), methods)).toEqual({
      region: 'US',
      method: 'videos.list',
    });
    expect(withMethod('php-cron:videos.list', 'videos.list')).toBe('php-cron:videos.list');
    expect(withMethod('spend:cli', undefined)).toBe('spend:cli');
    // Never longer than a ledger keeps (200): the tag as it was.
    const long = `c:${'x'.repeat(190)}`;
    expect(withMethod(long, 'videos.list')).toBe(long);
  });
});
