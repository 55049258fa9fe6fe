/**
 * A deterministic synthetic corpus of YouTube `videos` resources whose words follow a Zipf
 * distribution (s = 1) over a vocabulary of pronounceable made-up words, a few with diacritics.
 * Titles have 8 words, descriptions 60, tags 6 (in 4 tags), channel names 2. Video i is the same
 * for a given seed whatever else is generated, so corpora of different sizes share a prefix.
 *
 * With `otherScripts` (a share, e.g. 0.2), that share of the videos is written in one of ten other
 * scripts instead, with real words taken from the simulator's word lists (Zipf over each
 * language's words): titles of 6 words, some with a Latin word or two as real charts mix them,
 * descriptions of 10 and 20 Latin words (credits, links), 4 tags, channel names of 2. Japanese, Chinese and Thai run words together
 * without spaces (groups of one to three words), as their titles do. `scriptWords(i)` says which
 * words video i was made of, so a benchmark can check that each of them finds it.
 */
import type { VideoResource } from '../src/youtube/cache/types.js';
import { type Lang, LEXICON } from '../src/youtube/simulator/lexicon.js';
import { rng } from '../src/youtube/simulator/rng.js';

/** The other scripts' languages, and the script each is written in. */
export const SCRIPT_LANGS: ReadonlyArray<readonly [Lang, string]> = [
  ['hi', 'Devanagari'],
  ['ta', 'Tamil'],
  ['bn', 'Bengali'],
  ['ja', 'Japanese'],
  ['zh', 'Chinese'],
  ['ko', 'Hangul'],
  ['th', 'Thai'],
  ['ru', 'Cyrillic'],
  ['ar', 'Arabic'],
  ['he', 'Hebrew'],
];
const UNSPACED = new Set<Lang>(['ja', 'zh', 'th']);
const SCRIPT_OF: Partial<Record<Lang, RegExp>> = {
  hi: /\p{Script=Devanagari}/u,
  ta: /\p{Script=Tamil}/u,
  bn: /\p{Script=Bengali}/u,
  ja: /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u,
  zh: /\p{Script=Han}/u,
  ko: /\p{Script=Hangul}/u,
  th: /\p{Script=Thai}/u,
  ru: /\p{Script=Cyrillic}/u,
  ar: /\p{Script=Arabic}/u,
  he: /\p{Script=Hebrew}/u,
};

/** A language's words from the simulator's lists: every piece of text between spaces and punctuation. */
function languageWords(lang: Lang): string[] {
  const lex = LEXICON[lang];
  const texts: string[] = [
    ...lex.artists,
    ...lex.songs,
    ...lex.movies,
    ...lex.foods,
    ...lex.cities,
    ...lex.teams,
    ...lex.skills,
    ...lex.topics,
    ...lex.gadgets,
    ...Object.values(lex.titles).flat(),
    ...Object.values(lex.tags).flat(),
    ...Object.values(lex.channels).flat(),
  ];
  const script = SCRIPT_OF[lang]!;
  const words = new Set<string>();
  for (const t of texts) {
    for (const w of t.replace(/\{\w+\}/g, ' ').split(/[\s\p{P}\p{S}]+/u)) {
      if (w.length > 0 && script.test(w) && !/\d/.test(w)) words.add(w);
    }
  }
  return [...words];
}

interface ScriptVocab {
  lang: Lang;
  words: string[];
  cdf: Float64Array;
}

/** Which words a video in another script was made of. */
export interface ScriptWords {
  lang: Lang;
  script: string;
  title: string[];
  tags: string[];
}

const CONSONANTS = 'bcdfghjklmnprstvwz';
const VOWELS = 'aeiou';
const ACCENTED: Record<string, string> = { a: 'á', e: 'é', i: 'í', o: 'ö', u: 'ü' };

export interface CorpusOptions {
  vocabulary?: number;
  channels?: number;
  seed?: number;
  /** Share of videos in other scripts (0 to 1). Default 0. */
  otherScripts?: number;
}

export class Corpus {
  /** words[r - 1] is the word of Zipf rank r (1 = most common). */
  readonly words: string[];
  private readonly channelNames: string[];
  private readonly guide: Int32Array;
  private readonly cdf: Float64Array;
  private readonly seed: number;
  private readonly otherScripts: number;
  /** Share of videos in other scripts. */
  get scriptShare(): number {
    return this.otherScripts;
  }
  private readonly scriptVocab: ScriptVocab[];

  constructor(opts: CorpusOptions = {}) {
    const vocabulary = opts.vocabulary ?? 50_000;
    this.seed = opts.seed ?? 42;
    this.otherScripts = opts.otherScripts ?? 0;
    this.scriptVocab = SCRIPT_LANGS.map(([lang]) => {
      const words = languageWords(lang);
      // Shuffle deterministically, so list order does not decide which words are common.
      const r = rng(this.seed ^ 0xc0ffee);
      for (let k = words.length - 1; k > 0; k--) {
        const j = r.int(0, k);
        [words[k], words[j]] = [words[j]!, words[k]!];
      }
      const cdf = new Float64Array(words.length);
      let sum = 0;
      for (let k = 0; k < words.length; k++) cdf[k] = sum += 1 / (k + 1);
      for (let k = 0; k < words.length; k++) cdf[k]! /= sum;
      return { lang, words, cdf };
    });
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

  /** The language of video i when it is in another script, else undefined (a mixed hash of i). */
  private scriptIndex(i: number): number | undefined {
    if (this.otherScripts <= 0) return undefined;
    const h = Math.imul(i ^ (i >>> 16), 0x45d9f3b) >>> 0;
    const u = (Math.imul(h ^ (h >>> 16), 0x45d9f3b) >>> 0) / 2 ** 32;
    return u < this.otherScripts ? Math.floor((u / this.otherScripts) * SCRIPT_LANGS.length) : undefined;
  }

  private scriptWord(v: ScriptVocab, rand: () => number): string {
    const u = rand();
    let lo = 0;
    let hi = v.cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (v.cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return v.words[lo]!;
  }

  /** `n` words of the language, as its text is written: unspaced scripts in groups of 1–3 words. */
  private scriptText(v: ScriptVocab, rand: () => number, n: number, used: string[]): string {
    let out = '';
    let inGroup = 0;
    let groupSize = 1;
    for (let k = 0; k < n; k++) {
      const w = this.scriptWord(v, rand);
      used.push(w);
      if (k > 0) {
        if (!UNSPACED.has(v.lang)) out += ' ';
        else if (inGroup >= groupSize) {
          out += rand() < 0.7 ? ' ' : '、';
          inGroup = 0;
        }
      }
      if (inGroup === 0) groupSize = 1 + Math.floor(rand() * 3);
      out += w;
      inGroup++;
    }
    return out;
  }

  /** The words video i in another script was made of (undefined for the Latin ones). */
  scriptWords(i: number): ScriptWords | undefined {
    const k = this.scriptIndex(i);
    if (k === undefined) return undefined;
    const made = this.scriptVideo(i, k);
    return { lang: made.lang, script: SCRIPT_LANGS[k]![1], title: made.title, tags: made.tags };
  }

  private scriptVideo(
    i: number,
    k: number,
  ): { lang: Lang; video: VideoResource; title: string[]; tags: string[] } {
    const v = this.scriptVocab[k]!;
    const rand = rng((this.seed * 1_000_003 + i) >>> 0).next;
    const channel = Math.floor(rand() * 2000);
    const crand = rng((this.seed ^ 0x5eed) + channel * 7 + k).next;
    const channelTitle = this.scriptText(v, crand, 2, []);
    const title: string[] = [];
    let titleText = this.scriptText(v, rand, 6, title);
    if (rand() < 0.3) titleText = `${cap(this.word(rand))} ${titleText} ${this.word(rand)}`;
    const tags: string[] = [];
    const tagList = [0, 1, 2, 3].map(() => this.scriptText(v, rand, 1, tags));
    const video: VideoResource = {
      id: videoId(this.seed, i),
      snippet: {
        publishedAt: new Date(1_600_000_000_000 + Math.floor(rand() * 150_000_000_000)).toISOString(),
        channelId: `UC${k}${channel.toString(36).padStart(21, '0')}`,
        channelTitle,
        title: titleText,
        // Descriptions mix in Latin words (credits, links, hashtags), as real ones do.
        description: `${this.scriptText(v, rand, 10, [])} ${this.text(rand, 20)}`,
        tags: tagList,
        categoryId: String(1 + Math.floor(rand() * 30)),
        defaultLanguage: v.lang,
      },
      contentDetails: { duration: `PT${Math.floor(rand() * 60)}M${Math.floor(rand() * 60)}S` },
      statistics: {
        viewCount: String(Math.floor(Math.exp(rand() * 16))),
        likeCount: String(Math.floor(Math.exp(rand() * 11))),
        commentCount: String(Math.floor(Math.exp(rand() * 8))),
      },
    };
    return { lang: v.lang, video, title, tags };
  }

  video(i: number): VideoResource {
    const k = this.scriptIndex(i);
    if (k !== undefined) return this.scriptVideo(i, k).video;
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
