import { afterEach, describe, expect, it } from 'vitest';
import { runTrending } from '../../src/youtube/job-library/index.js';
import { planBudget } from '../../src/youtube/plan/plan.js';
import { type Rig, rig } from '../job-library/helpers.js';

const rigs: Rig[] = [];
afterEach(async () => {
  await Promise.all(rigs.splice(0).map((r) => r.close()));
});

describe('plan counts the pages the trending job fetches', () => {
  it('a run fetches at most schedules.trending.maxPages pages, as plan assumes', async () => {
    const r = await rig({ config: { regions: ['US'], schedules: { trending: { maxPages: 2 } } } });
    rigs.push(r);
    const result = await runTrending(r, { region: 'US' });
    expect(result).toMatchObject({ outcome: 'done', pages: 2, units: 2 });
    const units = planBudget(r.config).buckets.find((b) => b.bucket === 'units')!;
    expect(units.lines[0]).toMatchObject({ id: 'trending', units: 2 * 24 });
  });
});
