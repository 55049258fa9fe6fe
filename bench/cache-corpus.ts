/**
 * A deterministic synthetic corpus of YouTube `videos` resources whose words follow a Zipf
 * distribution (s = 1) over a vocabulary of pronounceable made-up words, a few with diacritics.
 * Titles have 8 words, descriptions 60, tags 6 (in 4 tags), channel names 2. Video i is the same
 * for a given seed whatever else is generated, so corpora of different sizes share a prefix.
 */
import type { VideoResource } from '../src/cache/types.js';
import { rng } from '../src/simulator/rng.js';

const CONSONANTS = 'bcdfghjklmnprstvwz';
const VOWELS = 'aeiou';
const ACCENTED: Record<string, string> = { a: 'á', e: 'é', i: 'í', o: 'ö', u: 'ü' };

export interface CorpusOptions {
  vocabulary?: number;
  channels?: number;
  seed?: number;
}

export class Corpus {
  /** words[r - 1] is the word of Zipf rank r (1 = most common). */
  readonly words: string[];
  private readonly channelNames: string[];
  private readonly guide: Int32Array;
  private readonly cdf: Float64Array;
  private readonly seed: number;

  constructor(opts: CorpusOptions = {}) {
    const vocabulary = opts.vocabulary ?? 50_000;
    this.seed = opts.seed ?? 42;
    const rand = rng(this.seed).next;
    // Shorter words first, so common words are short as in real text.
    const seen = new Set<string>();
    const words: string[] = [];
    for (let syllables = 1; words.length < vocabulary; syllables++) {
      const target = Math.min(vocabulary, words.length + Math.min(vocabulary, 90 ** syllables / 3));
      let misses = 0;
      while (words.length < target && misses < 1000) {
        let w = '';
        for (let s = 0; s < syllables; s++) {
          w += CONSONANTS[Math.floor(rand() * CONSONANTS.length)]!;
          w += VOWELS[Math.floor(rand() * VOWELS.length)]!;
          if (rand() < 0.3) w += CONSONANTS[Math.floor(rand() * CONSONANTS.length)]!;
        }
        if (seen.has(w)) {
          misses++;
          continue;
        }
        seen.add(w);
        // About 3% carry a diacritic (the index folds it; the plain spelling is never another word).
        if (rand() < 0.03) {
          const i = w.search(/[aeiou]/);
          if (i >= 0) w = w.slice(0, i) + ACCENTED[w[i]!]! + w.slice(i + 1);
        }
        words.push(w);
      }
    }
    this.words = words;
    // Zipf CDF with a guide table for O(1) expected sampling.
    const n = words.length;
    this.cdf = new Float64Array(n);
    let sum = 0;
    for (let r = 1; r <= n; r++) {
      sum += 1 / r;
      this.cdf[r - 1] = sum;
    }
    for (let i = 0; i < n; i++) this.cdf[i]! /= sum;
    this.guide = new Int32Array(n);
    let j = 0;
    for (let g = 0; g < n; g++) {
      while (this.cdf[j]! < g / n) j++;
      this.guide[g] = j;
    }
    const channels = opts.channels ?? 20_000;
    const crand = rng(this.seed ^ 0x5eed).next;
    this.channelNames = [];
    for (let c = 0; c < channels; c++) {
      this.channelNames.push(`${cap(this.word(crand))} ${cap(this.word(crand))}`);
    }
  }

  private word(rand: () => number): string {
    const u = rand();
    let i = this.guide[Math.floor(u * this.guide.length)]!;
    while (this.cdf[i]! < u) i++;
    return this.words[i]!;
  }

  private text(rand: () => number, n: number): string {
    const out = new Array<string>(n);
    for (let k = 0; k < n; k++) out[k] = this.word(rand);
    return out.join(' ');
  }

  video(i: number): VideoResource {
    const rand = rng((this.seed * 1_000_003 + i) >>> 0).next;
    const channel = Math.floor(rand() * this.channelNames.length);
    const tagWords = this.text(rand, 6).split(' ');
    return {
      id: videoId(this.seed, i),
      snippet: {
        publishedAt: new Date(1_600_000_000_000 + Math.floor(rand() * 150_000_000_000)).toISOString(),
        channelId: `UC${channel.toString(36).padStart(22, '0')}`,
        channelTitle: this.channelNames[channel]!,
        title: cap(this.text(rand, 8)),
        description: cap(this.text(rand, 60)),
        tags: [tagWords[0]!, `${tagWords[1]} ${tagWords[2]}`, tagWords[3]!, `${tagWords[4]} ${tagWords[5]}`],
        categoryId: String(1 + Math.floor(rand() * 30)),
        defaultLanguage: 'en',
      },
      contentDetails: { duration: `PT${Math.floor(rand() * 60)}M${Math.floor(rand() * 60)}S` },
      statistics: {
        viewCount: String(Math.floor(Math.exp(rand() * 16))),
        likeCount: String(Math.floor(Math.exp(rand() * 11))),
        commentCount: String(Math.floor(Math.exp(rand() * 8))),
      },
    };
  }

  /** Videos [start, end) in pages of `size`. */
  *pages(start: number, end: number, size = 50): Generator<VideoResource[]> {
    for (let p = start; p < end; p += size) {
      const page: VideoResource[] = [];
      for (let i = p; i < Math.min(end, p + size); i++) page.push(this.video(i));
      yield page;
    }
  }
}

const ID_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** An 11-character id that looks random (as YouTube's do), unique per index: a 64-bit bijective mix of i. */
function videoId(seed: number, i: number): string {
  let x = (BigInt(i) ^ (BigInt(seed) << 40n)) & 0xffffffffffffffffn;
  x = ((x ^ (x >> 30n)) * 0xbf58476d1ce4e5b9n) & 0xffffffffffffffffn;
  x = ((x ^ (x >> 27n)) * 0x94d049bb133111ebn) & 0xffffffffffffffffn;
  x ^= x >> 31n;
  let id = '';
  for (let k = 0; k < 11; k++) {
    id += ID_CHARS[Number(x & 63n)]!;
    x >>= 6n;
  }
  return id;
}

function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
