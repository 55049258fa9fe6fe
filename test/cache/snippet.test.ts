import { describe, expect, it } from 'vitest';
import { parseQuery, type QueryTerm } from '../../src/youtube/cache/query.js';
import { hitSnippet, mayMatch, snippet } from '../../src/youtube/cache/snippet.js';
import { nonAsciiTokens, tokenSpans, tokens } from '../../src/youtube/cache/tokenize.js';
import { EMOJI, LEXICON } from '../../src/youtube/simulator/lexicon.js';
import { rng } from '../../src/youtube/simulator/rng.js';

/** Whether a term matches in `text`, from all of its tokens (what `mayMatch` must never deny). */
function matchesIn(text: string, terms: Parameters<typeof mayMatch>[1]): boolean {
  return snippet(text, terms, ['[', ']']).matched;
}

const M = ['[', ']'] as const;
const terms = (q: string) => parseQuery(q).include;

describe('snippets', () => {
  it('highlights words, prefixes and whole phrases, folding case and diacritics', () => {
    expect(snippet('The Pokémon World Record run!', terms('pokemon "world record"'), M)).toEqual({
      text: 'The [Pokémon] [World Record] run!',
      matched: true,
    });
    expect(snippet('speedrunning and speed', terms('speed*'), M).text).toBe('[speedrunning] and [speed]');
    expect(snippet('record the world', terms('"world record"'), M)).toEqual({
      text: 'record the world',
      matched: false,
    });
  });

  it('cuts long text to a window around the matches, with an ellipsis where it cut', () => {
    const long = Array.from({ length: 100 }, (_, i) => `w${i}`).join(' ');
    const s = snippet(long, terms('w60'), M, 10);
    expect(s.text).toBe('…w57 w58 w59 [w60] w61 w62 w63 w64 w65 w66…');
    expect(snippet(long, terms('w0'), M, 5).text).toBe('[w0] w1 w2 w3 w4…');
    expect(snippet(long, terms('w99'), M, 5).text).toBe('…w95 w96 w97 w98 [w99]');
    expect(snippet(long, terms('nothing'), M, 3).text).toBe('w0 w1 w2…');
  });

  it('a hit shows the first field that matched, tags as a list, else the description', () => {
    const fields = {
      description: 'a cooking show',
      title: 'Pasta night',
      tags: JSON.stringify(['italian food', 'pasta']),
      channelTitle: 'Chef Luigi',
    };
    expect(hitSnippet(fields, terms('cooking'), M)).toBe('a [cooking] show');
    expect(hitSnippet(fields, terms('pasta'), M)).toBe('[Pasta] night');
    expect(hitSnippet(fields, terms('italian'), M)).toBe('[italian] food, pasta');
    expect(hitSnippet(fields, terms('luigi'), M)).toBe('Chef [Luigi]');
    expect(hitSnippet(fields, terms('absent'), M)).toBe('a cooking show');
    expect(
      hitSnippet({ description: null, title: null, tags: 'not json', channelTitle: null }, terms('x'), M),
    ).toBe('');
  });
});

/** Every string of the simulator's word lists, in every language (titles, tags, names, descriptions). */
function lexiconTexts(): string[] {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) for (const x of v) walk(x);
    else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) walk(x);
  };
  walk(LEXICON);
  walk(EMOJI);
  return out;
}

const term = (tokens: string[], prefix: boolean): QueryTerm => ({ tokens, prefix, fts: '' });

describe('the check that skips tokenizing a field no term can match in', () => {
  it('never denies a match that the full tokens have, over every script and tricky folding', () => {
    const texts = [
      ...lexiconTexts(),
      'The Pokémon World Record run!',
      'ＭＶ公開 ＦＵＬＬ ｖｅｒｓｉｏｎ',
      'Straße und STRASSE, Ærø, Łódź, İstanbul, ΣΟΦΟΣ',
      'café-crème x CAFÉ; naïve…coöperate',
      "BTS 방탄소년단 'Dynamite' Official MV",
      'ﬁnal ﬂag ① ⑴ Ⅻ ｶﾀｶﾅ',
      'don\u00ADt stop\u200Dme soft\u2060joined',
      'ёлка Ёлка приве́т',
      'क़िला ख़ बाज़ार',
      'مُحَمَّد ـــ שָׁלוֹם',
      'สวัสดีครับ ミュージックビデオ 公式MV 官方',
      '',
      '   ',
    ];
    const r = rng(7);
    let checked = 0;
    let denied = 0;
    for (const [i, text] of texts.entries()) {
      const own: QueryTerm[] = [];
      const toks = tokens(text);
      for (const [k, t] of toks.entries()) {
        own.push(term([t], false));
        const cps = Array.from(t);
        if (cps.length > 2) own.push(term([cps.slice(0, 2).join('')], true));
        if (k + 1 < toks.length) own.push(term([t, toks[k + 1]!], false), term([t, toks[k + 1]!], true));
      }
      for (const word of text.split(/\s+/u)) {
        try {
          own.push(...parseQuery(word).include);
        } catch {
          // nothing searchable in it
        }
      }
      // Terms of other texts: mostly no match, which is where the check says no.
      const others = [...own];
      for (let k = 0; k < 6; k++) {
        const other = tokens(texts[r.int(0, texts.length - 1)]!);
        if (other.length > 0) others.push(term([other[r.int(0, other.length - 1)]!], r.int(0, 3) === 0));
      }
      for (const t of others) {
        const full = matchesIn(text, [t]);
        const fast = mayMatch(text, [t]);
        if (full && !fast) throw new Error(`denied ${JSON.stringify(t.tokens)} in text ${i}: ${text}`);
        checked++;
        if (!fast) denied++;
      }
      if (others.some((t) => matchesIn(text, [t]))) expect(mayMatch(text, others)).toBe(true);
    }
    expect(checked).toBeGreaterThan(5000);
    expect(denied).toBeGreaterThan(checked / 20);
  });

  it('finds the tokens of the runs holding a non-ASCII character as tokenizing the whole text does', () => {
    const inRun = (c: number) => c >= 128 || /[A-Za-z0-9]/.test(String.fromCharCode(c));
    for (const text of [...lexiconTexts(), 'Ａb café-x ÿ,z 12é34 ..é', 'é', 'a é b', '']) {
      const want = tokenSpans(text)
        .filter(({ start }) => {
          let i = start;
          while (i > 0 && inRun(text.charCodeAt(i - 1))) i--;
          let j = start;
          while (j < text.length && inRun(text.charCodeAt(j))) j++;
          return /[^\0-\x7F]/.test(text.slice(i, j));
        })
        .map((t) => t.token);
      expect(nonAsciiTokens(text)).toEqual(want);
    }
  });

  it('gives the same snippets as tokenizing every field', () => {
    const fields = {
      description: 'Ein Lied über Straße und Café, mit Pokémon',
      title: 'POKEMON – Straße ＭＶ',
      tags: JSON.stringify(['café crème', 'naïve']),
      channelTitle: 'Kanal',
    };
    expect(hitSnippet(fields, terms('strasse'), M)).toBe('Ein Lied über [Straße] und Café, mit Pokémon');
    expect(hitSnippet(fields, terms('mv'), M)).toBe('POKEMON – Straße [ＭＶ]');
    expect(hitSnippet(fields, terms('naive'), M)).toBe('café crème, [naïve]');
    expect(hitSnippet(fields, terms('kanal'), M)).toBe('[Kanal]');
    expect(hitSnippet(fields, terms('cafe*'), M)).toBe('Ein Lied über Straße und [Café], mit Pokémon');
  });
});
