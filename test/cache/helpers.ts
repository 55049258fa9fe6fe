import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { VideoResource } from '../../src/cache/types.js';
import { rng } from '../../src/simulator/rng.js';

/** A temp directory removed by the returned cleanup. */
export function tempDir(prefix = 'qg-cache-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
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

/** FTS5's integrity check with rank 1: the index must match the content table row for row. */
export function ftsContentCheck(path: string): void {
  const db = new Database(path);
  try {
    db.exec(`INSERT INTO videos_fts (videos_fts, rank) VALUES ('integrity-check', 1)`);
  } finally {
    db.close();
  }
}
