import { describe, expect, it } from 'vitest';
import { parseQuery } from '../../src/cache/query.js';
import { hitSnippet, snippet } from '../../src/cache/snippet.js';

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
