/**
 * A recorded chart page whose video lacks optional parts (an upcoming live stream: no tags, no
 * contentDetails, no statistics) goes through the trending job: the page is not dropped, the video
 * is cached with what it has, and search shows it with the counts it does not have left empty.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTrending } from '../../src/youtube/job-library/index.js';
import { type Replay, replayServer } from '../upstream/recordings.js';
import { type Rig, rig } from './helpers.js';

let replay: Replay;
let r: Rig;

beforeAll(async () => {
  replay = await replayServer({ videos: '200-videos.list-upcoming-no-details.json' });
  r = await rig({ config: { upstream: { baseUrl: replay.url } } });
});

afterAll(async () => {
  await r?.close();
  await replay?.close();
});

describe('a recorded video without its optional parts', () => {
  it('is cached with what it has and found by search; its page is kept', async () => {
    const res = await runTrending(r, { region: 'FR' });
    expect(res).toMatchObject({ outcome: 'done', pages: 1, videos: 1 });
    expect(replay.hits).toBe(1);

    const v = r.cache.getVideo('-bS3fde8tp0');
    expect(v).toMatchObject({
      title: 'test de fonctionnalités',
      channelTitle: 'Jean-Baptiste Lasselle',
      categoryId: '22',
      tags: [],
      defaultLanguage: null,
      durationSeconds: null,
      viewCount: null,
      likeCount: null,
    });
    const found = r.cache.search('fonctionnalites');
    expect(found.hits.map((h) => h.id)).toEqual(['-bS3fde8tp0']);
    expect(found.hits[0]).toMatchObject({ viewCount: null, regions: ['FR'] });
  });
});
