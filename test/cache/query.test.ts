import { describe, expect, it } from 'vitest';
import { isQuotaGuardError } from '../../src/errors.js';
import {
  MAX_QUERY_CHARS,
  MAX_TERMS,
  matchExpression,
  parseQuery,
  type QueryTerm,
} from '../../src/youtube/cache/query.js';
import { tokens as foldTokens } from '../../src/youtube/cache/tokenize.js';

const fts = (terms: QueryTerm[]) => terms.map((t) => t.fts);

function invalid(q: string): string {
  try {
    parseQuery(q);
  } catch (e) {
    expect(isQuotaGuardError(e)).toBe(true);
    expect((e as { code: string }).code).toBe('QG_QUERY_INVALID');
    return (e as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(q)} to be rejected`);
}

describe('query language', () => {
  it('folds case and diacritics the way the index does', () => {
    expect(foldTokens('Pokémon ÉCOLE naïve Ångström')).toEqual(['pokemon', 'ecole', 'naive', 'angstrom']);
    expect(foldTokens("don't stop-me now!")).toEqual(['don', 't', 'stop', 'me', 'now']);
  });

  it('words are all required, phrases keep their order, prefixes and exclusions', () => {
    const q = parseQuery('Pokémon -minecraft "world record" speed* -"lets play"');
    expect(fts(q.include)).toEqual(['"pokemon"', '"world record"', '"speed"*']);
    expect(fts(q.exclude)).toEqual(['"minecraft"', '"lets play"']);
    expect(matchExpression(q.include, q.exclude)).toBe(
      '("pokemon" AND "world record" AND "speed"*) NOT "minecraft" NOT "lets play"',
    );
    expect(matchExpression(q.include)).toBe('"pokemon" AND "world record" AND "speed"*');
  });

  it('operators and syntax characters are plain text', () => {
    const q = parseQuery('cats NEAR(dogs, 3) OR col:title ^start (a AND b)');
    expect(fts(q.include)).toEqual([
      '"cats"',
      '"near dogs"',
      '"3"',
      '"or"',
      '"col title"',
      '"start"',
      '"a"',
      '"and"',
      '"b"',
    ]);
    expect(q.exclude).toEqual([]);
  });

  it('an unquoted Korean word also finds it with a particle attached (a prefix); quoted, it is exact', () => {
    expect(fts(parseQuery('뮤직비디오 공식').include)).toEqual(['"뮤직비디오"*', '"공식"*']);
    expect(fts(parseQuery('"뮤직비디오"').include)).toEqual(['"뮤직비디오"']);
    expect(fts(parseQuery('mv 뮤').include)).toEqual(['"mv"', '"뮤"']);
  });

  it('an unclosed quote runs to the end; a quoted prefix is a prefix phrase', () => {
    expect(fts(parseQuery('"world record attempt').include)).toEqual(['"world record attempt"']);
    expect(fts(parseQuery('"world rec"*').include)).toEqual(['"world rec"*']);
    expect(fts(parseQuery('say "hi"there').include)).toEqual(['"say"', '"hi"', '"there"']);
  });

  it('emoji, punctuation and lone stars or dashes are ignored; duplicates collapse', () => {
    const q = parseQuery('🎮 - * ** *** Mario — mario MARIO -- 🙂');
    expect(fts(q.include)).toEqual(['"mario"']);
    expect(q.exclude).toEqual([]);
    expect(fts(parseQuery('ab*cd*').include)).toEqual(['"ab cd"*']);
  });

  it('the FTS5 expression only ever holds letters, digits, spaces, quotes, stars and operators', () => {
    const q = parseQuery('x"; DROP TABLE videos; -- "y" \u0000 NOT\u200b z*');
    const expr = matchExpression(q.include, q.exclude);
    expect(expr.replace(/ AND | NOT /g, ' ')).toMatch(/^[()\p{L}\p{N}\p{Co} "*]+$/u);
  });

  it('rejects what cannot be searched with QG_QUERY_INVALID and a message that says why', () => {
    expect(invalid('')).toMatch(/empty/);
    expect(invalid('   🙂 ((( ')).toMatch(/empty/);
    expect(invalid('*')).toMatch(/empty/);
    expect(invalid('-minecraft -"lets play"')).toMatch(/only excludes/);
    expect(invalid('p*')).toMatch(/too short/);
    expect(invalid('x'.repeat(MAX_QUERY_CHARS + 1))).toMatch(/too long/);
    expect(invalid(Array.from({ length: MAX_TERMS + 1 }, (_, i) => `w${i}`).join(' '))).toMatch(
      /too many terms/,
    );
    expect(invalid(10 as unknown as string)).toMatch(/string/);
  });

  it('accepts exactly the limits', () => {
    expect(parseQuery('x'.repeat(MAX_QUERY_CHARS)).include).toHaveLength(1);
    expect(parseQuery(Array.from({ length: MAX_TERMS }, (_, i) => `w${i}`).join(' ')).include).toHaveLength(
      MAX_TERMS,
    );
    expect(fts(parseQuery('po*').include)).toEqual(['"po"*']);
  });
});
