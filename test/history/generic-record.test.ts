/**
 * The run record is generic (items and labels), and the stores keep what the previous release
 * reads and writes: the `region` label in the `region` column or field, the items in `videos`, the
 * other labels beside them where that release does not look. A run that release wrote reads back
 * with its region as a label; a remembered run replays across the two.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, inject, it } from 'vitest';
import { openRedisHistory } from '../../src/history/redis.js';
import { openSqliteHistory } from '../../src/history/sqlite.js';
import { parseRememberedRun, type RunSummary } from '../../src/history/types.js';
import { dir } from '../cli/helpers.js';

let n = 0;

function run(over: Partial<RunSummary> = {}): RunSummary {
  return {
    credential: 'main',
    job: 'ingest:shard',
    labels: { region: 'US', shard: '3' },
    startedAt: 1_000_000,
    finishedAt: 1_001_000,
    outcome: 'done',
    pages: 2,
    units: 2,
    items: 75,
    reason: null,
    used: { units: 2 },
    ...over,
  };
}

describe('on SQLite', () => {
  it("maps items and the region label to the previous release's columns, the rest beside them", async () => {
    const file = join(dir, `generic-${n++}.db`);
    const h = openSqliteHistory({ path: file });
    try {
      await h.record(run());
      await h.record(run({ job: 'plain', labels: {}, startedAt: 1_002_000, finishedAt: 1_003_000 }));
      const db = new Database(file, { readonly: true });
      const rows = db.prepare('SELECT job, region, videos, labels FROM qg_run ORDER BY id').all();
      const version = db.pragma('user_version', { simple: true });
      db.close();
      expect(rows).toEqual([
        { job: 'ingest:shard', region: 'US', videos: 75, labels: '{"region":"US","shard":"3"}' },
        { job: 'plain', region: null, videos: 75, labels: null },
      ]);
      // The column came with the table, no schema step: the previous release opens the file as it is.
      expect(version).toBe(4);
      const listed = await h.list({ credentials: ['main'] });
      expect(listed.map((r) => [r.job, r.labels, r.items])).toEqual([
        ['plain', {}, 75],
        ['ingest:shard', { region: 'US', shard: '3' }, 75],
      ]);
      expect(await h.list({ credentials: ['main'], region: 'US' })).toHaveLength(1);
      expect(await h.lastSuccess(['main'])).toEqual({ US: 1_001_000 });
    } finally {
      await h.close();
    }
  });

  it('adds the labels column to a table the previous release made, when a run is recorded, and reads its rows', async () => {
    const file = join(dir, `generic-${n++}.db`);
    // A file the previous release wrote: its table without labels, and one of its runs.
    const first = openSqliteHistory({ path: file });
    await first.record(run({ labels: {} }));
    await first.close();
    const db = new Database(file);
    db.exec('ALTER TABLE qg_run DROP COLUMN labels');
    db.prepare(
      `INSERT INTO qg_run (credential, job, region, started_at, finished_at, outcome, pages, units, videos, reason, used)
       VALUES ('main', 'trending:GB', 'GB', 2000000, 2001000, 'done', 4, 4, 200, NULL, '{}')`,
    ).run();
    db.close();
    const columns = () => {
      const d = new Database(file, { readonly: true });
      const names = (d.pragma('table_info(qg_run)') as Array<{ name: string }>).map((c) => c.name);
      d.close();
      return names;
    };
    const h = openSqliteHistory({ path: file });
    try {
      const listed = await h.list({ credentials: ['main'] });
      expect(listed[0]).toMatchObject({ job: 'trending:GB', labels: { region: 'GB' }, items: 200 });
      // Reading changed nothing.
      expect(columns()).not.toContain('labels');
      await h.record(run({ startedAt: 3_000_000, finishedAt: 3_001_000 }));
      expect(columns()).toContain('labels');
    } finally {
      await h.close();
    }
  });
});

describe('on Redis', () => {
  it("writes the previous release's stream fields, and the labels as one more it skips", async () => {
    const prefix = `${inject('keyPrefix')}generic${n++}:`;
    const h = await openRedisHistory('redis', inject('redisUrl'), { keyPrefix: prefix });
    const { Redis } = await import('ioredis');
    const redis = new Redis(inject('redisUrl'));
    try {
      await h.record(run());
      const [[, fields]] = (await redis.xrange(`${prefix}qg:{main}:runs`, '-', '+')) as [[string, string[]]];
      const f = Object.fromEntries(fields.flatMap((v, i) => (i % 2 === 0 ? [[v, fields[i + 1]]] : [])));
      expect(f).toMatchObject({ job: 'ingest:shard', region: 'US', videos: '75' });
      expect(JSON.parse(f['labels']!)).toEqual({ region: 'US', shard: '3' });
      expect((await h.list({ credentials: ['main'] }))[0]).toMatchObject({
        labels: { region: 'US', shard: '3' },
        items: 75,
      });
      expect(await h.lastSuccess(['main'])).toEqual({ US: 1_001_000 });
    } finally {
      redis.disconnect();
      await h.close();
    }
  });
});

describe('a run remembered under its id', () => {
  it('reads back whichever release remembered it', () => {
    const old = JSON.stringify({
      credential: 'main',
      job: 'trending:DE',
      region: 'DE',
      startedAt: 1,
      finishedAt: 2,
      outcome: 'done',
      pages: 1,
      units: 1,
      videos: 50,
      reason: null,
      used: {},
    });
    expect(parseRememberedRun(old, 'k')).toMatchObject({ labels: { region: 'DE' }, items: 50 });
    expect(parseRememberedRun(old, 'k')).not.toHaveProperty('videos');
  });
});
