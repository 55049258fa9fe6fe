import { describe, expect, it } from 'vitest';
import { renderStatus, STATUS_WIDTH, type StatusView } from '../../src/cli/render/status.js';
import { createGuard } from '../../src/guard/index.js';
import { openRunHistory } from '../../src/history/index.js';
import { openLedger } from '../../src/ledger/index.js';
import { loadYouTubeConfig as loadConfig } from '../../src/youtube/config/part.js';
import { busyConfig, cli, configFile, spendThenBlock, sqliteStore } from './helpers.js';

const quiet = { info() {}, warn() {} };

async function prepare() {
  const file = configFile(busyConfig(sqliteStore()));
  const config = loadConfig({ file, env: {} });
  const ledger = await openLedger(config.store.url);
  const guard = createGuard({ config, ledger, logger: quiet });
  return { file, config, ledger, guard };
}

describe('status at a glance', () => {
  it('folds the pace and narrower budgets into what each tier can really spend, in JSON and in the table', async () => {
    const { file, ledger, guard } = await prepare();
    try {
      // 1,493 backfill units: the hourly budget has 507 left, the pace 7.
      for (const cost of [1000, 493]) {
        const r = await guard.spend({
          credential: 'main',
          method: 'videos.list',
          tier: 'backfill',
          cost,
          tag: 'backfill:videos.list',
        });
        expect(r.allowed).toBe(true);
      }
      await guard.spend({
        credential: 'main',
        method: 'search.list',
        tier: 'manual',
        tag: 'manual:search.list',
      });
    } finally {
      await ledger.close();
    }
    const json = JSON.parse((await cli('status', '--json', '--config', file)).stdout) as StatusView;
    const [units, search] = ['units', 'search.list'].map(
      (id) => json.credentials[0]!.buckets.find((b) => b.id === id)!,
    );
    // remaining keeps its meaning (the tier's ceiling less what is used); spendable folds the rest in.
    expect(units).toMatchObject({
      used: 1_493,
      remaining: { scheduled: 9_500 - 1_493, backfill: 8_500 - 1_493, manual: 10_000 - 1_493 },
      spendable: { scheduled: 7, backfill: 7, manual: 7 },
      spendableLimitedBy: { scheduled: 'units pace', backfill: 'units pace', manual: 'units pace' },
      pace: { used: 1_493, remaining: 7 },
      budgets: [expect.objectContaining({ id: 'backfill-hourly', remaining: 507 })],
    });
    // The search budget covers every method of its bucket, so it holds the manual tier to 39.
    expect(search).toMatchObject({
      used: 1,
      spendable: { manual: 39 },
      spendableLimitedBy: { manual: 'manual-search', scheduled: null },
    });

    const text = (await cli('status', '--config', file)).stdout;
    expect(text).toMatch(/\n {2}units +1,493 +10,000 +500 +7\* +7\* +7\* +now\n/);
    expect(text).toMatch(/\n {2}search\.list +1 +100 +5 +94 +84 +39\* +-\n/);
    expect(text.replace(/\s+/g, ' ')).toContain(
      'pace: 1,493 of 1,500 per 1h, 7 left (* so every tier can spend 7)',
    );
    expect(text.replace(/\s+/g, ' ')).toContain(
      'budget backfill-hourly: 1,493 of 2,000 per 1h, 507 left\n'.trim(),
    );
    expect(text.replace(/\s+/g, ' ')).toContain(
      'budget manual-search (search.list only): 1 of 40 per 1d, 39 left (* so manual can spend 39)',
    );
    expect(text.replace(/\s+/g, ' ')).toContain('* held lower by a narrower budget or the pace');
    expect(text.replace(/\s+/g, ' ')).toContain(
      'next 100: how long until the scheduled tier can spend 100 units',
    );
    // One unit spent: no promise about the next 50 or 100.
    expect(text.replace(/\s+/g, ' ')).toMatch(
      /search\.list: 1d sliding window: the 1 unit spent frees up in (1d|23h 59m)/,
    );
  });

  it('stays within 100 columns, bars and a long block reason included, and gives times in both zones', async () => {
    const { file, config, ledger, guard } = await prepare();
    let view: StatusView;
    try {
      await spendThenBlock(guard, 'trending:US:videos.list');
      const { quotaStatus } = await import('../../src/guard/status.js');
      view = await quotaStatus(config, ledger);
    } finally {
      await ledger.close();
    }
    for (const tty of [false, true]) {
      const text = renderStatus(view, { tty, localZone: 'Asia/Tokyo' });
      for (const line of text.split('\n')) expect([...line].length).toBeLessThanOrEqual(STATUS_WIDTH);
      // Blocked: the bar is full and the next 100 come when the block lifts, not when the window frees.
      if (tty) expect(text).toMatch(/\n {2}units +█{10} +300 /);
      expect(text).toMatch(/\n {2}units +(\S+ +)?300 +10,000 +500 +0 +0 +0 +(2h 59m|3h)\n/);
      // The credential's zone (Los Angeles) and the operator's (Tokyo), which never share a clock reading.
      expect(text).toMatch(/its day runs in America\/Los_Angeles, now \d\d:\d\d:\d\d P[SD]T/);
      expect(text).toMatch(/BLOCKED until [\d:\- ]+ P[SD]T \([\d:\- ]+ GMT\+9 here\), in (2h 59m|3h):/);
    }
    const cliText = (await cli('status', '--config', file)).stdout;
    for (const line of cliText.split('\n')) expect([...line].length).toBeLessThanOrEqual(STATUS_WIDTH);
  });

  it('shows every region’s last successful fetch and flags the stale ones', async () => {
    const { file, config, ledger } = await prepare();
    await ledger.close();
    const history = await openRunHistory(config.store);
    const now = Date.now();
    const run = (region: string, ago: number, outcome: 'done' | 'failed' = 'done') =>
      history.record({
        credential: 'main',
        job: `trending:${region}`,
        labels: { region },
        startedAt: now - ago - 1_000,
        finishedAt: now - ago,
        outcome,
        pages: 4,
        units: 4,
        items: 200,
        reason: null,
        used: {},
      });
    await run('US', 10 * 60_000);
    await run('GB', 3 * 3_600_000);
    await run('DE', 60_000, 'failed');
    await history.close();

    const json = JSON.parse((await cli('status', '--json', '--config', file)).stdout) as StatusView;
    expect(json.freshness).toMatchObject({ periodMs: 3_600_000, staleAfterMs: 7_200_000 });
    const byRegion = Object.fromEntries(json.freshness!.regions.map((r) => [r.region, r]));
    expect(byRegion['US']).toMatchObject({ lastSuccessAt: now - 10 * 60_000, stale: false });
    expect(byRegion['GB']).toMatchObject({ lastSuccessAt: now - 3 * 3_600_000, stale: true });
    expect(byRegion['DE']).toMatchObject({ lastSuccessAt: null, ageMs: null, stale: true });
    expect(json.freshness!.regions).toHaveLength(12);

    const text = (await cli('status', '--config', file)).stdout;
    expect(text).toContain('regions: last successful fetch (trending every 1h; stale after 2h)');
    expect(text).toMatch(/ US 10m( \d+s)? ago · GB 3h( \d+s)? ago STALE · DE never STALE · /);
    for (const line of text.split('\n')) expect([...line].length).toBeLessThanOrEqual(STATUS_WIDTH);
  });
});
