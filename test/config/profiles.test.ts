/**
 * The quota model is data: a config defines profiles of its own in the form the built-in ones are
 * written in, validated by the same schema; credentials use them like the built-in ones.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import {
  BUILTIN_PROFILE_IDS,
  bucketOfUpstreamQuota,
  PROFILES,
  profileData,
  toProfile,
} from '../../src/profiles/profiles.js';
import { profileSchema } from '../../src/profiles/schema.js';
import { parseYouTubeConfig as parseConfig } from '../../src/youtube/config/part.js';

const MINE = {
  description: 'a larger shared bucket and a priced search bucket',
  timeZone: 'Europe/Berlin',
  defaultBucket: 'units',
  buckets: { units: { quota: 20_000 }, search: { quota: 500 } },
  methods: {
    'videos.list': { bucket: 'units', cost: 3 },
    'search.list': { bucket: 'search', cost: 5 },
  },
  upstreamNames: {
    search: { displayName: 'Search Queries', metric: 'youtube.googleapis.com/search_list' },
  },
};

function problems(raw: unknown): string[] {
  try {
    parseConfig(raw, { env: {} });
  } catch (e) {
    if (e instanceof ConfigError) return [...e.problems];
    throw e;
  }
  return [];
}

describe('built-in profiles are data', () => {
  it('each is its data run through the schema a config’s profiles go through, and back', () => {
    for (const id of BUILTIN_PROFILE_IDS) {
      const data = profileData(PROFILES[id]);
      expect(toProfile(id, profileSchema.parse(data))).toEqual(PROFILES[id]);
      expect(toProfile(id, profileSchema.parse(profileData(PROFILES[id]!)))).toEqual(PROFILES[id]);
    }
  });

  it('a config that writes a built-in profile out under another id gets the same credential', () => {
    const copy = parseConfig(
      {
        profiles: { 'my-2026': profileData(PROFILES['youtube-2026']) },
        credentials: [{ id: 'a', profile: 'my-2026' }],
      },
      { env: {} },
    ).credential('a');
    const builtin = parseConfig({ credentials: [{ id: 'a' }] }, { env: {} }).credential('a');
    expect({ ...copy, profile: 'youtube-2026' }).toEqual(builtin);
  });
});

describe('a profile of the config’s own', () => {
  it('gives the credential its buckets, costs, time zone and upstream names', () => {
    const config = parseConfig(
      { profiles: { 'youtube-2027': MINE }, credentials: [{ id: 'default', profile: 'youtube-2027' }] },
      { env: {} },
    );
    const c = config.credential('default');
    expect(c.profile).toBe('youtube-2027');
    expect(c.timeZone).toBe('Europe/Berlin');
    expect(Object.keys(c.buckets)).toEqual(['units', 'search']);
    expect(c.buckets['units']).toMatchObject({ quota: 20_000, reserve: 1_000, ceilings: { manual: 20_000 } });
    expect(c.methods['search.list']).toEqual({ bucket: 'search', cost: 5 });
    const profile = config.profiles['youtube-2027']!;
    expect(bucketOfUpstreamQuota(profile, { limit: 'defaultSearchListPerDayPerProject' })).toBe('search');
    expect(config.profiles['youtube-classic']).toBe(PROFILES['youtube-classic']);
  });

  it('is validated with a path per problem: buckets that do not exist, costs, the time zone', () => {
    const bad = {
      ...MINE,
      timeZone: 'Mars/Olympus',
      defaultBucket: 'shared',
      methods: { 'videos.list': { bucket: 'nope', cost: 0 } },
      upstreamNames: { elsewhere: { displayName: 'x' } },
    };
    const list = problems({ profiles: { broken: bad } });
    expect(list).toEqual(
      expect.arrayContaining([
        'profiles.broken.timeZone: must be a time zone such as America/Los_Angeles',
        'profiles.broken.methods["videos.list"].cost: must be > 0',
      ]),
    );
    const refs = problems({
      profiles: {
        broken: { ...bad, timeZone: 'UTC', methods: { 'videos.list': { bucket: 'nope', cost: 1 } } },
      },
    });
    expect(refs).toEqual([
      "profiles.broken.defaultBucket: unknown bucket 'shared' (the profile's buckets: units, search)",
      `profiles.broken.methods["videos.list"].bucket: unknown bucket 'nope' (the profile's buckets: units, search)`,
      "profiles.broken.upstreamNames.elsewhere: unknown bucket 'elsewhere' (the profile's buckets: units, search)",
    ]);
  });

  it('a credential naming an unknown profile, and a profile reusing a built-in id, are config errors', () => {
    expect(
      problems({ profiles: { mine: MINE }, credentials: [{ id: 'a', profile: 'youtube-2030' }] }),
    ).toEqual([
      "credentials[0].profile: unknown profile 'youtube-2030' (did you mean 'youtube-2026'?) (built in: youtube-2026, youtube-classic; in profiles: mine)",
    ]);
    expect(problems({ profiles: { 'youtube-2026': MINE } })).toEqual([
      `profiles["youtube-2026"]: 'youtube-2026' is a built-in profile; give yours another id`,
    ]);
  });
});
