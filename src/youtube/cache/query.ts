/**
 * The search query language, translated to FTS5 MATCH expressions that cannot be malformed.
 *
 *   pokemon            a word (every word is required)
 *   "world record"     a phrase: these words next to each other, in this order
 *   poke*              a prefix (at least MIN_PREFIX letters before the star)
 *   -minecraft         exclude a word, a phrase (-"let's play") or a prefix (-mine*)
 *
 * Everything else is plain text: parentheses, AND/OR/NOT/NEAR, colons and carets have no special
 * meaning, and a missing closing quote ends the phrase at the end of the query. Words become
 * tokens with the index's own function (tokenize.ts), so the expression handed to FTS5 only ever
 * contains tokens (letters, digits, kept marks), spaces, quotes and `*`. A word that is several
 * tokens (`don't`, `公式ミュージック`) is searched as a phrase of them.
 */
import { QueryInvalidError } from './errors.js';
import { tokens as tokenize } from './tokenize.js';

export const MAX_QUERY_CHARS = 1000;
export const MAX_TERMS = 32;
const MIN_PREFIX = 2;
const KOREAN_WORD = /^\p{Script=Hangul}{2,}$/u;

export interface QueryTerm {
  /** Tokens, as the index stores them (tokenize.ts). A phrase has several. */
  tokens: string[];
  /** The last token is a prefix. */
  prefix: boolean;
  /** The FTS5 string for this term, e.g. `"world record"` or `"poke"*`. */
  fts: string;
}

export interface ParsedQuery {
  include: QueryTerm[];
  exclude: QueryTerm[];
}

function makeTerm(tokens: string[], prefix: boolean): QueryTerm {
  return { tokens, prefix, fts: `"${tokens.join(' ')}"${prefix ? '*' : ''}` };
}

const isSpace = (c: string | undefined): boolean => c !== undefined && /\s/u.test(c);

/** Parse user text. Throws QueryInvalidError (QG_QUERY_INVALID) when nothing searchable is left. */
export function parseQuery(input: string): ParsedQuery {
  if (typeof input !== 'string') throw new QueryInvalidError('query must be a string');
  const chars = Array.from(input);
  if (chars.length > MAX_QUERY_CHARS) {
    throw new QueryInvalidError(`query is too long: ${chars.length} characters (at most ${MAX_QUERY_CHARS})`);
  }
  const include: QueryTerm[] = [];
  const exclude: QueryTerm[] = [];
  const seen = new Set<string>();
  let i = 0;
  while (i < chars.length) {
    while (isSpace(chars[i])) i++;
    if (i >= chars.length) break;
    let negative = false;
    while (chars[i] === '-') {
      negative = true;
      i++;
    }
    let text: string;
    let prefix = false;
    const quoted = chars[i] === '"';
    if (quoted) {
      let j = i + 1;
      while (j < chars.length && chars[j] !== '"') j++;
      text = chars.slice(i + 1, j).join('');
      i = j + 1;
      if (chars[i] === '*') {
        prefix = true;
        while (chars[i] === '*') i++;
      }
    } else {
      let j = i;
      while (j < chars.length && !isSpace(chars[j]) && chars[j] !== '"') j++;
      let word = chars.slice(i, j).join('');
      i = j;
      if (/\*$/.test(word)) {
        word = word.replace(/\*+$/, '');
        // `a*b*` or `*` alone: only a star right after a letter or digit makes a prefix.
        prefix = /[\p{L}\p{N}\p{Co}\p{M}]$/u.test(word);
      }
      text = word;
    }
    const tokens = tokenize(text);
    if (tokens.length === 0) continue; // punctuation, emoji, a lone `*` or `-`: nothing to match
    // Korean attaches particles to nouns (`뮤직비디오를`): an unquoted Korean word of two syllables
    // or more also finds the word with a particle, as a prefix does.
    if (!quoted && !prefix && KOREAN_WORD.test(tokens[tokens.length - 1]!)) prefix = true;
    if (prefix) {
      const last = tokens[tokens.length - 1]!;
      if (Array.from(last).length < MIN_PREFIX) {
        throw new QueryInvalidError(
          `prefix "${last}*" is too short: give at least ${MIN_PREFIX} letters or digits before *`,
        );
      }
    }
    const term = makeTerm(tokens, prefix);
    const key = `${negative ? '-' : '+'}${term.fts}`;
    if (seen.has(key)) continue;
    seen.add(key);
    (negative ? exclude : include).push(term);
  }
  if (include.length + exclude.length > MAX_TERMS) {
    throw new QueryInvalidError(
      `query has too many terms: ${include.length + exclude.length} (at most ${MAX_TERMS})`,
    );
  }
  if (include.length === 0) {
    throw new QueryInvalidError(
      exclude.length > 0
        ? 'query only excludes: add at least one word to search for'
        : 'query is empty: type at least one word (letters or digits)',
    );
  }
  return { include, exclude };
}

/** `a AND b NOT c NOT d` for a set of terms; `include` must not be empty. */
export function matchExpression(include: readonly QueryTerm[], exclude: readonly QueryTerm[] = []): string {
  let expr = include.map((t) => t.fts).join(' AND ');
  if (exclude.length > 0) expr = `(${expr})${exclude.map((t) => ` NOT ${t.fts}`).join('')}`;
  return expr;
}
