/**
 * The simulator's synthetic YouTube: channels, videos, trending charts and search, all derived
 * from a seed and the simulated time, never from request order.
 *
 * Time is cut into chart periods (1 h by default). Each period releases a fixed number of new
 * videos; a video trends for 24–96 periods with a popularity curve that rises and then decays, and
 * its statistics grow for ever. A region's chart in a period is the top ~200 live videos by
 * appeal × regional affinity × life curve, so charts overlap across regions that share a language
 * and drift from one period to the next: a later fetch sees new videos and higher counts.
 *
 * A video id encodes its release period and index under a seed-keyed checksum, so any id the
 * simulator ever listed (in this process or another with the same seed) can be answered, and ids
 * from another seed are unknown. Everything expensive (charts, searches) is cached. The resources'
 * JSON is written by corpus-json.ts.
 */

import {
  EMOJI,
  GAMES,
  KIND_CATEGORY,
  KIND_WEIGHTS,
  type Kind,
  type Lang,
  LEXICON,
  langsOf,
} from './lexicon.js';
import { Lru } from './lru.js';
import { hash32, type Rng, rng, unit, weighted } from './rng.js';

export interface CorpusOptions {
  seed: string;
  regions: readonly string[];
  /** Length of one chart period in ms. */
  periodMs: number;
}

export interface ChannelSeed {
  id: string;
  lang: Lang;
  kind: Kind;
  title: string;
  handle: string;
  country: string;
  publishedAtMs: number;
  subscribers: number;
  hiddenSubscribers: boolean;
  videoCount: number;
  views: number;
}

export interface VideoSeed {
  id: string;
  /** Release period. */
  epoch: number;
  home: string;
  lang: Lang;
  kind: Kind;
  categoryId: string;
  channel: ChannelSeed;
  title: string;
  description: string;
  tags: string[];
  durationSec: number;
  publishedAtMs: number;
  appeal: number;
  globalness: number;
  /** Periods it can trend for. */
  lifetime: number;
  peakViews: number;
  likeRatio: number;
  commentRatio: number;
  likesHidden: boolean;
  commentsOff: boolean;
  hd: boolean;
  caption: boolean;
  licensed: boolean;
}

/**
 * What real chart videos carry and the seed does not decide: live and upcoming broadcasts, region
 * restrictions, no tags, no language. Drawn from a hash of the video id, so they never shift the
 * rest of a video.
 */
export interface VideoTraits {
  broadcast: 'none' | 'live' | 'upcoming';
  tags: boolean;
  language: boolean;
  /** Countries where the video cannot be watched (never one with a chart here). */
  blocked?: string[];
}

/** Countries a restricted video may be blocked in. */
const RESTRICTABLE = ['CN', 'CU', 'IR', 'KP', 'RU', 'SY', 'JP', 'KR', 'MX', 'IT'];

export interface VideoCounts {
  viewCount: number;
  likeCount?: number;
  commentCount?: number;
}

/** Parts of a video resource the simulator can render. */
export const VIDEO_PARTS = [
  'id',
  'snippet',
  'contentDetails',
  'statistics',
  'status',
  'liveStreamingDetails',
] as const;
export type VideoPart = (typeof VIDEO_PARTS)[number];

const MIN_LIFE = 24;
const MAX_LIFE = 96;
const SPAWN_PER_REGION = 8;
const SEARCH_CAP = 500;
const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const ID_INDEX = new Map([...ID_ALPHABET].map((c, i) => [c, i]));
const REGION_WEIGHT: Record<string, number> = { US: 1.4, IN: 1.3, BR: 1.2 };
const KINDS = Object.keys(KIND_WEIGHTS) as Kind[];
const KIND_W = KINDS.map((k) => KIND_WEIGHTS[k]);

export function digits(n: number, count: number): string {
  let out = '';
  let v = n;
  for (let i = 0; i < count; i++) {
    out = ID_ALPHABET[v % 64] + out;
    v = Math.floor(v / 64);
  }
  return out;
}

function undigits(s: string): number | undefined {
  let v = 0;
  for (const c of s) {
    const d = ID_INDEX.get(c);
    if (d === undefined) return undefined;
    v = v * 64 + d;
  }
  return v;
}

/** Case- and diacritic-folded words, the way a search index would see them. */
export function foldWords(text: string): string[] {
  return (
    text
      .normalize('NFD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

function fill(template: string, slots: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, k: string) => slots[k] ?? '');
}

function handleOf(title: string, index: number): string {
  const ascii = title
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .replace(/[^A-Za-z0-9]/g, '')
    .toLowerCase();
  return `@${ascii.length >= 3 ? ascii : `channel${index}`}`;
}

export class Corpus {
  readonly seed: string;
  readonly regions: readonly string[];
  readonly periodMs: number;
  readonly #spawnPerEpoch: number;
  readonly #mask1: number;
  readonly #mask2: number;
  readonly #channelsByLang = new Map<Lang, Map<Kind, ChannelSeed[]>>();
  readonly #channelsById = new Map<string, ChannelSeed>();
  readonly #regionWeights: number[];
  readonly #epochs = new Lru<number, VideoSeed[]>(2_048);
  readonly #charts = new Lru<string, readonly VideoSeed[]>(512);
  readonly #searches = new Lru<string, readonly VideoSeed[]>(256);
  readonly #words = new WeakMap<VideoSeed, { title: string[]; tags: string[]; other: string[] }>();
  readonly #traitsOf = new WeakMap<VideoSeed, VideoTraits>();

  constructor(options: CorpusOptions) {
    this.seed = options.seed;
    this.regions = options.regions;
    this.periodMs = options.periodMs;
    this.#spawnPerEpoch = Math.min(4_096, SPAWN_PER_REGION * this.regions.length);
    this.#mask1 = hash32(this.seed, 'mask1');
    this.#mask2 = hash32(this.seed, 'mask2') & 0x3fffffff;
    this.#regionWeights = this.regions.map((r) => REGION_WEIGHT[r] ?? 1);
    this.#buildChannels();
  }

  epochAt(nowMs: number): number {
    return Math.max(0, Math.floor(nowMs / this.periodMs));
  }

  // ---- channels ----------------------------------------------------------------------------

  #buildChannels(): void {
    const langs = new Set<Lang>();
    for (const r of this.regions) for (const [l] of langsOf(r)) langs.add(l);
    let index = 0;
    for (const lang of langs) {
      const lex = LEXICON[lang];
      const byKind = new Map<Kind, ChannelSeed[]>();
      const country = this.regions.find((r) => langsOf(r).some(([l]) => l === lang)) ?? 'US';
      const add = (kind: Kind, title: string) => {
        const r = rng(hash32(this.seed, 'channel', lang, title));
        const id = `UC${digits(hash32(this.seed, 'cid', lang, title), 6)}${digits(hash32(this.seed, 'cid2', title), 6)}${digits(hash32(lang, title, this.seed), 6)}${digits(r.int(0, 16_777_215), 4)}`;
        const subscribers = Math.round(Math.exp(11 + 2.2 * r.next()) * (kind === 'music' ? 3 : 1));
        const ch: ChannelSeed = {
          id,
          lang,
          kind,
          title,
          handle: handleOf(title, index),
          country,
          publishedAtMs: Date.UTC(
            2008 + r.int(0, 16),
            r.int(0, 11),
            r.int(1, 28),
            r.int(0, 23),
            r.int(0, 59),
          ),
          subscribers,
          hiddenSubscribers: r.chance(0.05),
          videoCount: r.int(40, 2_500),
          views: Math.round(subscribers * (80 + 400 * r.next())),
        };
        index++;
        this.#channelsById.set(id, ch);
        const list = byKind.get(kind) ?? [];
        list.push(ch);
        byKind.set(kind, list);
      };
      for (const artist of lex.artists) add('music', artist);
      for (const [kind, names] of Object.entries(lex.channels) as Array<[Kind, readonly string[]]>) {
        for (const name of names) add(kind, name);
      }
      this.#channelsByLang.set(lang, byKind);
    }
  }

  channel(id: string): ChannelSeed | undefined {
    return this.#channelsById.get(id);
  }

  // ---- videos ------------------------------------------------------------------------------

  #videoId(epoch: number, idx: number): string {
    const hi = ((epoch ^ this.#mask1) >>> 0) * 16 + (idx >>> 8);
    const check = hash32(this.seed, 'vid', epoch, idx) & 0x3fffff;
    const lo = ((((idx & 0xff) << 22) | check) ^ this.#mask2) >>> 0;
    return digits(hi, 6) + digits(lo, 5);
  }

  /** The video an id names, or undefined when it is not one of this seed's ids. */
  videoById(id: string): VideoSeed | undefined {
    if (id.length !== 11) return undefined;
    const hi = undigits(id.slice(0, 6));
    const loX = undigits(id.slice(6));
    if (hi === undefined || loX === undefined) return undefined;
    const lo = (loX ^ this.#mask2) >>> 0;
    const epoch = (Math.floor(hi / 16) ^ this.#mask1) >>> 0;
    const idx = ((hi % 16) << 8) | (lo >>> 22);
    if (idx >= this.#spawnPerEpoch) return undefined;
    if ((lo & 0x3fffff) !== (hash32(this.seed, 'vid', epoch, idx) & 0x3fffff)) return undefined;
    return this.spawn(epoch)[idx];
  }

  /** The videos released in a period (generated once, then cached). */
  spawn(epoch: number): VideoSeed[] {
    return this.#epochs.getOr(epoch, () => {
      const out: VideoSeed[] = [];
      for (let i = 0; i < this.#spawnPerEpoch; i++) out.push(this.#makeVideo(epoch, i));
      return out;
    });
  }

  #makeVideo(epoch: number, idx: number): VideoSeed {
    const r = rng(hash32(this.seed, 'video', epoch, idx));
    const home = weighted(r, this.regions, this.#regionWeights);
    const langs = langsOf(home);
    const lang = weighted(
      r,
      langs.map(([l]) => l),
      langs.map(([, w]) => w),
    );
    const kind = weighted(r, KINDS, KIND_W);
    const categoryId = r.pick(KIND_CATEGORY[kind]);
    const lex = LEXICON[lang];
    const channels = this.#channelsByLang.get(lang)?.get(kind) ?? [];
    const channel = r.pick(channels);
    const team = r.pick(lex.teams);
    let team2 = r.pick(lex.teams);
    if (team2 === team) team2 = lex.teams[(lex.teams.indexOf(team) + 1) % lex.teams.length] ?? team2;
    const slots: Record<string, string> = {
      artist: channel.title,
      song: r.pick(lex.songs),
      game: r.pick(GAMES),
      movie: r.pick(lex.movies),
      food: r.pick(lex.foods),
      city: r.pick(lex.cities),
      team,
      team2,
      skill: r.pick(lex.skills),
      topic: r.pick(lex.topics),
      gadget: r.pick(lex.gadgets),
      n: String(r.int(2, 60)),
      emoji: r.pick(EMOJI),
    };
    const shortsAllowed = kind === 'music' || kind === 'gaming' || kind === 'vlog' || kind === 'sports';
    const short = shortsAllowed && r.chance(0.07);
    let title = fill(r.pick(lex.titles[kind]), slots).replace(/\s+/g, ' ').trim();
    if (short) title += ' #shorts';
    const used = ['artist', 'game', 'movie', 'team', 'city'].filter((k) =>
      title.includes(slots[k] ?? '\u0000'),
    );
    const tags = [
      ...new Set([...lex.tags[kind].filter(() => r.chance(0.7)), ...used.map((k) => slots[k] as string)]),
    ];
    const hashtags = tags
      .slice(0, 3)
      .map((t) => `#${t.replace(/[\s'’-]+/g, '')}`)
      .join(' ');
    const description = fill(r.pick(lex.descriptions), { ...slots, title, hashtags });
    const durationSec = short ? r.int(12, 59) : this.#durationFor(kind, r);
    const globalChance = kind === 'music' || kind === 'movies' || kind === 'gaming' ? 0.16 : 0.06;
    const globalness = r.chance(globalChance) ? 0.4 + 0.5 * r.next() : 0.08 * r.next();
    const appeal = Math.exp(0.7 * r.normal());
    const kindViews: Record<Kind, number> = {
      music: 2,
      gaming: 1,
      movies: 1.5,
      sports: 1.2,
      vlog: 1,
      howto: 0.5,
      news: 0.6,
      tech: 0.7,
    };
    return {
      id: this.#videoId(epoch, idx),
      epoch,
      home,
      lang,
      kind,
      categoryId,
      channel,
      title,
      description,
      tags,
      durationSec,
      publishedAtMs: epoch * this.periodMs - Math.round((0.05 + r.next()) * this.periodMs),
      appeal,
      globalness,
      lifetime: r.int(MIN_LIFE, MAX_LIFE),
      peakViews:
        Math.round(appeal * kindViews[kind] * (globalness > 0.3 ? 4e6 : 6e5) * (0.5 + r.next())) + 1_000,
      likeRatio: 0.015 + 0.055 * r.next(),
      commentRatio: 0.0008 + 0.005 * r.next(),
      likesHidden: r.chance(0.03),
      commentsOff: r.chance(0.04),
      hd: r.chance(0.92),
      caption: r.chance(0.35),
      licensed: r.chance(0.6),
    };
  }

  #durationFor(kind: Kind, r: Rng): number {
    const ranges: Record<Kind, [number, number]> = {
      music: [140, 290],
      gaming: [480, 3_600],
      movies: [60, 170],
      sports: [180, 840],
      vlog: [360, 1_500],
      howto: [240, 1_200],
      news: [90, 900],
      tech: [300, 1_200],
    };
    const [lo, hi] = ranges[kind];
    return r.int(lo, hi);
  }

  /** A video's broadcast state, restriction and missing fields (see VideoTraits). */
  traits(v: VideoSeed): VideoTraits {
    let t = this.#traitsOf.get(v);
    if (!t) {
      const live = unit(this.seed, 'broadcast', v.id);
      const restricted = unit(this.seed, 'restricted', v.id) < 0.04;
      const elsewhere = RESTRICTABLE.filter((c) => !this.regions.includes(c));
      t = {
        broadcast: live < 0.02 ? 'live' : live < 0.03 ? 'upcoming' : 'none',
        tags: unit(this.seed, 'tags', v.id) >= 0.12,
        language: unit(this.seed, 'language', v.id) >= 0.3,
        ...(restricted && elsewhere.length > 0
          ? { blocked: elsewhere.filter((_, i) => unit(this.seed, 'blocked', v.id, i) < 0.3).slice(0, 3) }
          : {}),
      };
      if (t.blocked?.length === 0)
        t.blocked = [elsewhere[hash32(this.seed, v.id) % elsewhere.length] as string];
      this.#traitsOf.set(v, t);
    }
    return t;
  }

  /** Counts at a period: they only ever grow. */
  counts(v: VideoSeed, epoch: number): VideoCounts {
    if (this.traits(v).broadcast === 'upcoming') return { viewCount: 0, likeCount: 0 };
    const age = Math.max(0, epoch - v.epoch) + 0.5;
    const views = Math.round(v.peakViews * (1 - Math.exp(-age / (v.lifetime / 4))));
    const out: VideoCounts = { viewCount: views };
    if (!v.likesHidden) out.likeCount = Math.round(views * v.likeRatio);
    if (!v.commentsOff) out.commentCount = Math.round(views * v.commentRatio);
    return out;
  }

  /** Whether the video exists at a period (released by then). */
  exists(v: VideoSeed, epoch: number): boolean {
    return v.epoch <= epoch;
  }

  // ---- charts ------------------------------------------------------------------------------

  #affinity(v: VideoSeed, region: string): number {
    if (v.home === region) return 1;
    if (langsOf(region).some(([l]) => l === v.lang)) return 0.35 + 0.5 * v.globalness;
    return Math.max(0.01, v.globalness * (v.lang === 'en' ? 0.6 : 0.4));
  }

  #life(age: number, lifetime: number): number {
    if (age < 0 || age >= lifetime) return 0;
    return Math.min(1, (age + 1) / 4) * (1 - age / lifetime) ** 0.8;
  }

  /** Live videos at a period (released in the last MAX_LIFE periods and not yet faded). */
  #live(epoch: number): VideoSeed[] {
    const out: VideoSeed[] = [];
    for (let e = Math.max(0, epoch - MAX_LIFE + 1); e <= epoch; e++) {
      for (const v of this.spawn(e)) if (epoch - v.epoch < v.lifetime) out.push(v);
    }
    return out;
  }

  /** Chart length for a region, category and period: 190–200, so the last page is partial. */
  chartSize(region: string, categoryId: string | undefined, epoch: number): number {
    return 190 + (hash32(this.seed, 'size', region, categoryId ?? '', epoch) % 11);
  }

  /** The trending chart of a region (optionally one category) at a period, best first. */
  chart(region: string, categoryId: string | undefined, epoch: number): readonly VideoSeed[] {
    return this.#charts.getOr(`${region}|${categoryId ?? ''}|${epoch}`, () => {
      const scored: Array<{ v: VideoSeed; s: number }> = [];
      for (const v of this.#live(epoch)) {
        if (categoryId !== undefined && v.categoryId !== categoryId) continue;
        const s =
          v.appeal *
          this.#affinity(v, region) *
          this.#life(epoch - v.epoch, v.lifetime) *
          (0.95 + 0.1 * unit(this.seed, v.id, epoch));
        if (s > 0) scored.push({ v, s });
      }
      scored.sort((a, b) => b.s - a.s);
      return scored.slice(0, this.chartSize(region, categoryId, epoch)).map((x) => x.v);
    });
  }

  // ---- search ------------------------------------------------------------------------------

  #wordsOf(v: VideoSeed): { title: string[]; tags: string[]; other: string[] } {
    let w = this.#words.get(v);
    if (!w) {
      w = {
        title: foldWords(v.title),
        tags: foldWords(v.tags.join(' ')),
        other: foldWords(`${v.channel.title} ${v.description}`),
      };
      this.#words.set(v, w);
    }
    return w;
  }

  /**
   * Live videos matching every word of `q` (case and diacritics folded, prefix match), best
   * first: title hits above tag hits above channel/description hits, then popularity and, with
   * a region, regional affinity. An empty query lists the most viewed.
   */
  search(q: string, region: string | undefined, epoch: number): readonly VideoSeed[] {
    const terms = foldWords(q);
    return this.#searches.getOr(`${terms.join(' ')}|${region ?? ''}|${epoch}`, () => {
      const scored: Array<{ v: VideoSeed; s: number }> = [];
      for (const v of this.#live(epoch)) {
        const w = this.#wordsOf(v);
        let s = 0;
        let all = true;
        for (const t of terms) {
          const hit = (ws: string[]) => ws.some((x) => x.startsWith(t));
          const m = hit(w.title) ? 3 : hit(w.tags) ? 2 : hit(w.other) ? 1 : 0;
          if (m === 0) {
            all = false;
            break;
          }
          s += m;
        }
        if (!all) continue;
        const pop = Math.log10(this.counts(v, epoch).viewCount + 10);
        scored.push({ v, s: (terms.length ? s : 1) * pop * (region ? this.#affinity(v, region) : 1) });
      }
      scored.sort((a, b) => b.s - a.s);
      return scored.slice(0, SEARCH_CAP).map((x) => x.v);
    });
  }

  /** An opaque page token that pins a walk to one period, so a chart's pages stay consistent. */
  pageToken(epoch: number, offset: number): string {
    const check = hash32(this.seed, 'tok', epoch, offset) % 46_656;
    return `CA${epoch.toString(36)}_${offset.toString(36)}_${check.toString(36)}`;
  }

  parsePageToken(token: string): { epoch: number; offset: number } | undefined {
    const m = /^CA([0-9a-z]+)_([0-9a-z]+)_([0-9a-z]+)$/.exec(token);
    if (!m) return undefined;
    const epoch = Number.parseInt(m[1] as string, 36);
    const offset = Number.parseInt(m[2] as string, 36);
    if (hash32(this.seed, 'tok', epoch, offset) % 46_656 !== Number.parseInt(m[3] as string, 36))
      return undefined;
    return { epoch, offset };
  }
}
