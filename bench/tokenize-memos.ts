/**
 * The tokenizer's memos (src/youtube/cache/tokenize.ts): what they hold when full, and what their size
 * does to the ingest. Not a bench section; run on its own:
 *
 *   node --expose-gc --import tsx bench/tokenize-memos.ts memory [videos] [share in other scripts]
 *   node --import tsx bench/tokenize-memos.ts ingest [videos] [share in other scripts]
 *
 * The words are the bench corpus's (bench/cache-corpus.ts: made-up Latin words, a few with
 * diacritics, and the simulator's word lists in ten other scripts).
 *
 * `memory`: every text column of each video goes through `indexText` (what the ingest calls for
 * every column that is not pure ASCII) and `nonAsciiTokens` (what a search's snippets call), as a
 * process that ingests and searches would. The memos' maps are found by wrapping `Map` while
 * tokenize.ts creates them, so the entries they hold are counted, not guessed; the heap is measured
 * after a full GC. `ingest`: CPU time per video of ingesting the videos into a new cache in pages
 * of 50, final `flush()` included (the corpus is generated before the clock starts). To compare two
 * memo sizes, run it alternately from two copies of the sources.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { VideoResource } from '../src/youtube/cache/types.js';
import { Corpus } from './cache-corpus.js';

const mode = process.argv[2] ?? 'memory';
const videos = Number(process.argv[3] ?? (mode === 'ingest' ? 50_000 : 400_000));
const share = Number(process.argv[4] ?? (mode === 'ingest' ? 0.2 : 1));
const memoMax = Number(
  /const MEMO_MAX = ([\d_]+);/
    .exec(readFileSync(new URL('../src/youtube/cache/tokenize.ts', import.meta.url), 'utf8'))?.[1]
    ?.replaceAll('_', ''),
);
const mib = (b: number) => (b / 2 ** 20).toFixed(1);

async function memory(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with node --expose-gc');
  // Maps made by tokenize.ts (the memos' generations), held weakly: a dropped generation is collected.
  const made: Array<WeakRef<Map<unknown, unknown>>> = [];
  const OriginalMap = Map;
  class TrackedMap<K, V> extends OriginalMap<K, V> {
    constructor(entries?: Iterable<readonly [K, V]> | null) {
      super(entries);
      if (new Error().stack?.includes('tokenize.ts')) made.push(new WeakRef(this));
    }
  }
  globalThis.Map = TrackedMap as MapConstructor;
  const { indexText, nonAsciiTokens } = await import('../src/youtube/cache/tokenize.js');
  const corpus = new Corpus({ otherScripts: share });
  const heap = async (): Promise<number> => {
    await new Promise((r) => setImmediate(r)); // this turn's WeakRef targets are released first
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  const before = await heap();
  for (let i = 0; i < videos; i++) {
    const s = corpus.video(i).snippet!;
    for (const text of [s.title, s.description, s.channelTitle, (s.tags ?? []).join(' ')]) {
      if (typeof text !== 'string') continue;
      indexText(text);
      nonAsciiTokens(text);
    }
  }
  const after = await heap();
  const n = made.reduce((sum, r) => sum + (r.deref()?.size ?? 0), 0);
  const perEntry = (after - before) / n;
  console.log(
    `MEMO_MAX ${memoMax}, ${videos} videos (${share * 100} % in other scripts): ${n} entries ` +
      `(at most ${6 * memoMax}: three memos of two generations), heap ${mib(after - before)} MiB more, ` +
      `${perEntry.toFixed(0)} bytes per entry: ${mib(perEntry * 6 * memoMax)} MiB at the cap`,
  );
}

async function ingest(): Promise<void> {
  const { openCache } = await import('../src/youtube/cache/index.js');
  const corpus = new Corpus({ otherScripts: share });
  const pages: VideoResource[][] = [...corpus.pages(0, videos, 50)];
  const dir = mkdtempSync(join(tmpdir(), 'qg-memo-'));
  try {
    const cache = openCache(join(dir, 'cache.db'));
    const started = process.cpuUsage();
    for (const [p, page] of pages.entries()) {
      cache.ingestTrendingPage({
        region: 'US',
        fetchedAt: 1_700_000_000_000 + p,
        rankOffset: 0,
        videos: page,
      });
    }
    cache.flush();
    const cpu = process.cpuUsage(started);
    cache.close();
    console.log(
      `MEMO_MAX ${memoMax}, ${videos} videos (${share * 100} % in other scripts): ` +
        `${((cpu.user + cpu.system) / videos).toFixed(1)} µs of CPU per video`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await (mode === 'ingest' ? ingest() : memory());
