/**
 * Search in every script the charts hold: a corpus of titles, tags and channel names in Latin with
 * diacritics, Greek, Cyrillic, Devanagari, Tamil, Bengali, Japanese, Chinese, Korean, Thai, Arabic
 * and Hebrew, with emoji, built from the simulator's word lists. Words a reader would pick from a
 * title or a tag (the text between spaces and punctuation) must find their video, exclusions must
 * exclude, phrases must keep their order, prefixes must work where words are separated by spaces,
 * and the index must hold, for every row, exactly the tokens a query for its text looks for.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isQuotaGuardError } from '../../src/errors.js';
import { type Cache, openCache } from '../../src/youtube/cache/index.js';
import { tokens } from '../../src/youtube/cache/tokenize.js';
import type { VideoResource } from '../../src/youtube/cache/types.js';
import { EMOJI, type Kind, type Lang, LEXICON } from '../../src/youtube/simulator/lexicon.js';
import { rng } from '../../src/youtube/simulator/rng.js';
import { ftsContentCheck, tempDir } from './helpers.js';

const LANGS: Lang[] = ['en', 'de', 'fr', 'pt', 'ru', 'hi', 'ta', 'bn', 'ja', 'zh', 'ko', 'th', 'ar', 'he'];
const KINDS: Kind[] = ['music', 'gaming', 'movies', 'sports', 'vlog', 'howto', 'news', 'tech'];
const PER_LANG = 40;

/** A few Greek chart titles (no simulator region speaks Greek). */
const GREEK = [
  {
    title: 'Νέο τραγούδι 2026 – Επίσημο βίντεο κλιπ 🎶',
    tags: ['ελληνική μουσική', 'τραγούδι'],
    channel: 'Μουσικό Κανάλι',
  },
  { title: 'Ολυμπιακός εναντίον Παναθηναϊκού | Στιγμιότυπα', tags: ['ποδόσφαιρο'], channel: 'Αθλητικά Νέα' },
  {
    title: 'Συνταγή για μουσακά σε 30 λεπτά',
    tags: ['μαγειρική', 'συνταγές'],
    channel: 'Κουζίνα της Γιαγιάς',
  },
  { title: 'ΕΙΔΗΣΕΙΣ: Καιρός και θερμοκρασίες αύριο', tags: ['ειδήσεις'], channel: 'Ειδήσεις Τώρα' },
];

/** The scripts checked, how to tell them, and whether they separate words with spaces. */
const SCRIPTS: ReadonlyArray<readonly [string, RegExp, boolean]> = [
  ['Latin', /\p{Script=Latin}/u, true],
  ['Greek', /\p{Script=Greek}/u, true],
  ['Cyrillic', /\p{Script=Cyrillic}/u, true],
  ['Devanagari', /\p{Script=Devanagari}/u, true],
  ['Tamil', /\p{Script=Tamil}/u, true],
  ['Bengali', /\p{Script=Bengali}/u, true],
  ['Japanese', /[\p{Script=Hiragana}\p{Script=Katakana}]/u, false],
  ['Han', /\p{Script=Han}/u, false],
  ['Hangul', /\p{Script=Hangul}/u, true],
  ['Thai', /\p{Script=Thai}/u, false],
  ['Arabic', /\p{Script=Arabic}/u, true],
  ['Hebrew', /\p{Script=Hebrew}/u, true],
];

/** The script a word is written in (its first letter's), for the per-script figures. */
function scriptOf(word: string): string {
  return SCRIPTS.find(([, re]) => re.test(word))?.[0] ?? 'digits';
}

/** What a reader takes for words: text between spaces and punctuation, with a letter or digit. */
function readerWords(text: string): string[] {
  return text.split(/[\s\p{P}\p{S}]+/u).filter((w) => /[\p{L}\p{N}]/u.test(w) && Array.from(w).length >= 2);
}

const fill = (template: string, slots: Record<string, string>) =>
  template
    .replace(/\{(\w+)\}/g, (_, k: string) => slots[k] ?? '')
    .replace(/\s+/g, ' ')
    .trim();

interface Made {
  video: VideoResource;
  title: string;
  tags: string[];
  channel: string;
}

function corpus(): Made[] {
  const r = rng(11);
  const out: Made[] = [];
  const add = (id: string, title: string, tags: string[], channel: string, description = '') =>
    out.push({
      video: {
        id,
        snippet: { title, tags, channelTitle: channel, channelId: `UC-${id}`, description },
        statistics: { viewCount: String(r.int(100, 1_000_000)) },
      },
      title,
      tags,
      channel,
    });
  for (const lang of LANGS) {
    const lex = LEXICON[lang];
    for (let k = 0; k < PER_LANG; k++) {
      const kind = KINDS[k % KINDS.length]!;
      const templates = lex.titles[kind];
      const artist = r.pick(lex.artists);
      const slots: Record<string, string> = {
        artist,
        song: r.pick(lex.songs),
        game: r.pick(['Minecraft', 'Pokémon', 'Château Siege', 'Roblox']),
        movie: r.pick(lex.movies),
        food: r.pick(lex.foods),
        city: r.pick(lex.cities),
        team: lex.teams[k % lex.teams.length]!,
        team2: lex.teams[(k + 1) % lex.teams.length]!,
        skill: r.pick(lex.skills),
        topic: r.pick(lex.topics),
        gadget: r.pick(lex.gadgets),
        n: String(r.int(2, 60)),
        emoji: r.pick(EMOJI),
      };
      const title = fill(templates[Math.floor(k / KINDS.length) % templates.length]!, slots);
      const tags = [...lex.tags[kind], slots.city!];
      const channel = kind === 'music' ? artist : r.pick(lex.channels[kind]);
      const description = fill(r.pick(lex.descriptions), { ...slots, title, hashtags: '' });
      add(`${lang}-${k}`, title, tags, channel, description);
    }
  }
  GREEK.forEach((g, k) => {
    add(`el-${k}`, g.title, g.tags, g.channel);
  });
  add('bts', "BTS 방탄소년단 'Dynamite' Official MV", ['kpop'], 'HYBE LABELS');
  return out;
}

describe('search in every script', () => {
  let cache: Cache;
  let path: string;
  let cleanup: () => void;
  const made = corpus();
  const byId = new Map(made.map((m) => [m.video.id, m]));

  beforeAll(() => {
    const t = tempDir();
    cleanup = t.cleanup;
    path = join(t.dir, 'cache.db');
    cache = openCache(path);
    for (let i = 0; i < made.length; i += 50) {
      cache.ingestTrendingPage({
        region: 'IN',
        fetchedAt: 1_700_000_000_000,
        rankOffset: i,
        videos: made.slice(i, i + 50).map((m) => m.video),
      });
    }
    cache.flush();
  });
  afterAll(() => {
    cache.close();
    cleanup();
  });

  /** Does a search for `query`, narrowed to the video's own channel, return it? */
  const finds = (query: string, id: string) =>
    cache.search(query, { channelId: `UC-${id}`, limit: 10 }).hits.some((h) => h.id === id);

  /** Does any field of the video hold these tokens next to each other? (the oracle) */
  const holds = (m: Made, query: string) => {
    const want = ` ${tokens(query).join(' ')} `;
    return [m.title, m.channel, ...m.tags, m.video.snippet?.description ?? ''].some((f) =>
      ` ${tokens(f).join(' ')} `.includes(want),
    );
  };

  it('the index holds, for every row, exactly the tokens a query for its text looks for', () => {
    cache.close();
    expect(ftsContentCheck(path)).toBe(made.length);
    cache = openCache(path);
  });

  it('finds at least 99 % of the words taken from titles and tags, in every script', () => {
    const tally = new Map<string, { asked: number; missed: string[] }>();
    for (const m of made) {
      for (const word of new Set([...readerWords(m.title), ...m.tags.flatMap(readerWords)])) {
        const t = tally.get(scriptOf(word)) ?? { asked: 0, missed: [] };
        t.asked++;
        if (!finds(word, m.video.id)) t.missed.push(`${word} (${m.video.id})`);
        tally.set(scriptOf(word), t);
      }
    }
    const lines = [...tally].map(
      ([script, t]) =>
        `${script}: ${t.asked - t.missed.length}/${t.asked}${t.missed.length ? ` missed: ${t.missed.join(', ')}` : ''}`,
    );
    console.log(`words found per script\n  ${lines.join('\n  ')}`);
    const expected = SCRIPTS.map(([name]) => name);
    for (const script of expected) {
      const t = tally.get(script);
      expect(t, script).toBeDefined();
      expect(
        (t!.asked - t!.missed.length) / t!.asked,
        `${script}: ${t!.missed.join(', ')}`,
      ).toBeGreaterThanOrEqual(0.99);
    }
  });

  it('finds the words users type for the charts of JP, TW, TH and KR in longer titles', () => {
    for (const q of [
      '公式',
      'ミュージック',
      'ビデオ',
      '官方',
      'เพลง',
      '뮤직비디오',
      'आधिकारिक',
      'официальный',
      'τραγούδι',
    ]) {
      const holders = made.filter(
        (m) => m.title.toLowerCase().includes(q) || m.tags.some((t) => t.includes(q)),
      );
      expect(holders.length, q).toBeGreaterThan(0);
      for (const m of holders) expect(finds(q, m.video.id), `${q} in ${m.title}`).toBe(true);
    }
    // Case and accents folded where they are accents: Greek and Cyrillic titles.
    expect(finds('ΤΡΑΓΟΥΔΙ', 'el-0')).toBe(true);
    expect(finds('ειδησεις', 'el-3')).toBe(true);
  });

  it('finds a mixed-script title by any of its words', () => {
    for (const w of ['BTS', '방탄소년단', 'Dynamite', 'official', 'mv', 'bts 방탄소년단']) {
      expect(finds(w, 'bts'), w).toBe(true);
    }
  });

  it('excluded words exclude, in every script', () => {
    const r = rng(5);
    for (const lang of [...LANGS, 'el']) {
      const own = made.filter((m) => m.video.id.startsWith(`${lang}-`));
      for (let k = 0; k < 5; k++) {
        const a = r.pick(own);
        const b = r.pick(own);
        const w1 = r.pick(readerWords(a.title));
        const w2 = r.pick(readerWords(b.title));
        if (tokens(w1).join(' ') === tokens(w2).join(' ')) continue;
        const all = cache.search(w1, { limit: 100 }).hits.map((h) => h.id);
        const without = cache.search(`${w1} -${w2}`, { limit: 100 }).hits.map((h) => h.id);
        const expected = all.filter((id) => !holds(byId.get(id)!, w2));
        expect(new Set(without), `${w1} -${w2}`).toEqual(new Set(expected));
        if (holds(a, w2)) expect(without).not.toContain(a.video.id);
      }
    }
  });

  it('phrases match in order, in every script', () => {
    let checked = 0;
    for (const m of made) {
      // Every word here, one letter long too, so that the first two are next to each other.
      const words = m.title.split(/[\s\p{P}\p{S}]+/u).filter((w) => /[\p{L}\p{N}]/u.test(w));
      if (words.length < 2) continue;
      const [w1, w2] = [words[0]!, words[1]!];
      expect(finds(`"${w1} ${w2}"`, m.video.id), `"${w1} ${w2}" in ${m.title}`).toBe(true);
      // Reversed, the phrase finds the video only if some field holds that order too.
      expect(finds(`"${w2} ${w1}"`, m.video.id), `"${w2} ${w1}"`).toBe(holds(m, `${w2} ${w1}`));
      checked++;
    }
    expect(checked).toBeGreaterThan(made.length / 2);
  });

  it('prefixes work in the scripts that separate words with spaces', () => {
    const spaced = new Set(SCRIPTS.filter(([, , spaces]) => spaces).map(([name]) => name));
    const tally = new Map<string, number>();
    for (const m of made) {
      for (const word of readerWords(m.title)) {
        const script = scriptOf(word);
        const letters = Array.from(word);
        if (!spaced.has(script) || letters.length < 4 || tokens(word).length !== 1) continue;
        const prefix = letters.slice(0, Math.max(2, letters.length - 2)).join('');
        const head = tokens(prefix);
        if (head.length !== 1 || Array.from(head[0]!).length < 2) continue;
        expect(finds(`${prefix}*`, m.video.id), `${prefix}* for ${word}`).toBe(true);
        tally.set(script, (tally.get(script) ?? 0) + 1);
      }
    }
    for (const script of spaced) expect(tally.get(script) ?? 0, script).toBeGreaterThan(0);
  });

  it('emoji are not words: a query of emoji only has nothing to search for', () => {
    try {
      cache.search('🔥🎶');
      expect.unreachable();
    } catch (e) {
      expect(isQuotaGuardError(e) && e.code).toBe('QG_QUERY_INVALID');
    }
    expect(finds('🔥 official', 'bts')).toBe(true);
  });
});
