import type Database from 'better-sqlite3';
import { sqliteDriver } from '../../src/sqlite/driver.js';
import { FTS_COLUMNS } from '../../src/youtube/cache/schema.js';
import { tokens } from '../../src/youtube/cache/tokenize.js';
import type { VideoResource } from '../../src/youtube/cache/types.js';
import { rng } from '../../src/youtube/simulator/rng.js';
import { tempDir as harnessTempDir } from '../harness/temp.js';

/**
 * Calls `onGet` with the arguments of every `get` of a statement whose SQL starts with `prefix`,
 * prepared on `db` from now on (what a searcher asks SQLite, counted by a test).
 */
export function watchStatements(
  db: Database.Database,
  prefix: string,
  onGet: (args: unknown[]) => void,
): void {
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    const s = prepare(sql) as Database.Statement;
    if (sql.startsWith(prefix)) {
      const get = s.get.bind(s);
      s.get = ((...args: unknown[]) => {
        onGet(args);
        return get(...args);
      }) as typeof s.get;
    }
    return s;
  }) as typeof db.prepare;
}

/** A temp directory removed by the returned cleanup. */
export function tempDir(prefix = 'qg-cache-'): { dir: string; cleanup: () => void } {
  const t = harnessTempDir(prefix);
  return { dir: t.dir, cleanup: t.remove };
}

export interface VideoSpec {
  title?: string;
  description?: string;
  tags?: string[];
  channelId?: string;
  channelTitle?: string;
  views?: number;
  likes?: number;
}

/** A full `videos` resource as videos.list returns it. */
export function video(id: string, spec: VideoSpec = {}): VideoResource {
  return {
    id,
    snippet: {
      publishedAt: '2025-03-01T12:00:00Z',
      channelId: spec.channelId ?? `UC-${id}`,
      channelTitle: spec.channelTitle ?? `Channel ${id}`,
      title: spec.title ?? `Video ${id}`,
      description: spec.description ?? '',
      ...(spec.tags ? { tags: spec.tags } : {}),
      categoryId: '20',
      defaultAudioLanguage: 'en',
    },
    contentDetails: { duration: 'PT3M20S' },
    statistics: {
      viewCount: String(spec.views ?? 1000),
      likeCount: String(spec.likes ?? 10),
      commentCount: '3',
    },
  };
}

/** Deterministic filler text from a small vocabulary (for bulk tests). */
export function words(seed: number, n: number, vocab: readonly string[]): string {
  const r = rng(seed);
  return Array.from({ length: n }, () => r.pick(vocab)).join(' ');
}

/**
 * FTS5's integrity check, then the index against the content, row by row: every indexed row's
 * tokens, per column and in order, as FTS5 stored them, are those tokenize.ts gives for the row's
 * stored text (the tokens a query for that text looks for). Returns the rows compared.
 */
export function ftsContentCheck(path: string, table = 'videos_fts'): number {
  // The driver the library loads (this file is imported by child processes too, where no test
  // config points `better-sqlite3` at it).
  const db = new (sqliteDriver().Database)(path);
  try {
    db.exec(`INSERT INTO ${table} (${table}) VALUES ('integrity-check')`);
    return indexMatchesContent(db, table);
  } finally {
    db.close();
  }
}

/** The comparison of `ftsContentCheck` on an open database; throws on the first difference. */
export function indexMatchesContent(db: Database.Database, table = 'videos_fts'): number {
  db.exec(
    `CREATE VIRTUAL TABLE IF NOT EXISTS temp.${table}_instances USING fts5vocab(main, ${table}, instance)`,
  );
  const stored = new Map<string, Array<[number, string]>>();
  for (const [term, doc, col, offset] of db
    .prepare(`SELECT term, doc, col, offset FROM temp.${table}_instances`)
    .raw()
    .iterate() as Iterable<[string, number, string, number]>) {
    const key = `${doc}:${col}`;
    const list = stored.get(key) ?? [];
    list.push([offset, term]);
    stored.set(key, list);
  }
  const rows =
    table === 'videos_fts'
      ? `SELECT vid, ${FTS_COLUMNS.join(', ')} FROM videos WHERE vid <= (SELECT value FROM meta WHERE key = 'indexed_upto')`
      : `SELECT v.vid, ${FTS_COLUMNS.map((c) => `v.${c}`).join(', ')} FROM hot_videos h JOIN videos v ON v.vid = h.vid`;
  let n = 0;
  for (const row of db.prepare(rows).iterate() as Iterable<Record<string, string | null> & { vid: number }>) {
    n++;
    for (const col of FTS_COLUMNS) {
      const key = `${row.vid}:${col}`;
      const got = (stored.get(key) ?? []).sort((a, b) => a[0] - b[0]).map(([, t]) => t);
      stored.delete(key);
      const want = tokens(row[col] ?? '');
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        throw new Error(
          `index differs from content for row ${row.vid}, ${col}: ${JSON.stringify(got)} != ${JSON.stringify(want)}`,
        );
      }
    }
  }
  if (stored.size > 0)
    throw new Error(`index holds rows not in the content: ${[...stored.keys()].slice(0, 5).join(', ')}`);
  return n;
}
