/**
 * Snippets with the matched words highlighted, computed from the stored text in JS with the
 * tokens of the index (tokenize.ts) and the same term semantics (word, prefix, phrase). FTS5's
 * snippet() would have to set up every term's iterator across every index segment for each hit,
 * which costs more than the ranking for rare words; the hits are only a page of rows.
 */
import type { QueryTerm } from './query.js';
import { nonAsciiTokens, type Token, tokenSpans } from './tokenize.js';
import { parseTags } from './video.js';

/** Per token: -1, or the index of the first token of the match it belongs to (a phrase spans several). */
function matches(tokens: Token[], terms: readonly QueryTerm[]): Int32Array {
  const hit = new Int32Array(tokens.length).fill(-1);
  for (const term of terms) {
    const n = term.tokens.length;
    for (let i = 0; i + n <= tokens.length; i++) {
      let ok = true;
      for (let k = 0; k < n && ok; k++) {
        const want = term.tokens[k]!;
        const got = tokens[i + k]!.token;
        ok = term.prefix && k === n - 1 ? got.startsWith(want) : got === want;
      }
      if (ok) for (let k = 0; k < n; k++) if (hit[i + k] === -1) hit[i + k] = i;
    }
  }
  return hit;
}

export interface Snippet {
  text: string;
  matched: boolean;
}

/**
 * The window of at most `maxTokens` tokens with the most matched tokens (the first such window),
 * matches wrapped in the markers, `…` where the text was cut.
 */
export function snippet(
  text: string,
  terms: readonly QueryTerm[],
  marks: readonly [string, string],
  maxTokens = 24,
): Snippet {
  const tokens = tokenSpans(text);
  if (tokens.length === 0) return { text: text.trim(), matched: false };
  return cut(text, tokens, matches(tokens, terms), marks, maxTokens);
}

const isAsciiAlnum = (c: number): boolean =>
  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/** Whether `token` could be a token of a pure ASCII run of `lower` (the text lower-cased). */
function inAsciiRun(lower: string, token: string, prefix: boolean): boolean {
  for (let i = 0; i < token.length; i++) if (!isAsciiAlnum(token.charCodeAt(i))) return false;
  for (let k = lower.indexOf(token); k >= 0; k = lower.indexOf(token, k + 1)) {
    // Such a run starts and ends at ASCII punctuation, a space or the text's end.
    const before = k === 0 ? 32 : lower.charCodeAt(k - 1);
    if (before >= 128 || isAsciiAlnum(before)) continue;
    if (prefix) return true;
    const end = k + token.length;
    const after = end === lower.length ? 32 : lower.charCodeAt(end);
    if (after < 128 && !isAsciiAlnum(after)) return true;
  }
  return false;
}

/**
 * False when no term can match in `text`, decided without tokenizing all of it: a term's first
 * token (or, for a one-word prefix, its start) must be among the text's tokens. A token of a pure
 * ASCII run is that run lower-cased, so it is in `text.toLowerCase()` between ASCII characters
 * that are not letters or digits; only the runs holding a non-ASCII character (a few words of
 * most Latin text) go through the word rules. True means "maybe": the caller then tokenizes the
 * whole text as before, so snippets are the same.
 */
export function mayMatch(text: string, terms: readonly QueryTerm[]): boolean {
  if (text === '') return false;
  const lower = text.toLowerCase();
  for (const t of terms) if (inAsciiRun(lower, t.tokens[0]!, t.prefix && t.tokens.length === 1)) return true;
  let ascii = true;
  for (let i = 0; i < text.length && ascii; i++) if (text.charCodeAt(i) >= 128) ascii = false;
  if (ascii) return false;
  for (const token of nonAsciiTokens(text)) {
    for (const t of terms) {
      const first = t.tokens[0]!;
      if (t.prefix && t.tokens.length === 1 ? token.startsWith(first) : token === first) return true;
    }
  }
  return false;
}

/** The snippet of `text` when a term matches in it, else null (without building the unmatched one). */
function matchedSnippet(
  text: string,
  terms: readonly QueryTerm[],
  marks: readonly [string, string],
): string | null {
  // Most hits of a rare word match in the title: their description is not tokenized.
  if (!mayMatch(text, terms)) return null;
  const tokens = tokenSpans(text);
  const group = matches(tokens, terms);
  if (!group.some((g) => g >= 0)) return null;
  return cut(text, tokens, group, marks, 24).text;
}

function cut(
  text: string,
  tokens: Token[],
  group: Int32Array,
  [open, close]: readonly [string, string],
  maxTokens: number,
): Snippet {
  let from = 0;
  let to = tokens.length;
  if (tokens.length > maxTokens) {
    let best = 0;
    let count = 0;
    for (let i = 0; i < maxTokens; i++) if (group[i]! >= 0) count++;
    let bestCount = count;
    for (let i = 1; i + maxTokens <= tokens.length; i++) {
      if (group[i - 1]! >= 0) count--;
      if (group[i + maxTokens - 1]! >= 0) count++;
      if (count > bestCount) {
        bestCount = count;
        best = i;
      }
    }
    // Start a few tokens before the window's first match, so the match has some context.
    let first = best;
    while (first < tokens.length && group[first]! < 0) first++;
    if (first < tokens.length) best = Math.min(Math.max(0, first - 3), tokens.length - maxTokens);
    from = best;
    to = from + maxTokens;
  }
  // Characters to highlight: each match from its first token's start to its last token's end (a
  // phrase is one highlight; katakana pairs overlap, so marks are per character, not per token).
  const marked = new Uint8Array(text.length);
  let matched = false;
  for (let i = from; i < to; i++) {
    const g = group[i]!;
    if (g < 0) continue;
    matched = true;
    const t = tokens[i]!;
    // Within a phrase, the gap to the next token is highlighted too.
    const next = i + 1 < to && group[i + 1] === g ? tokens[i + 1]!.start : t.end;
    marked.fill(1, t.start, Math.max(next, t.end));
  }
  const begin = from === 0 ? 0 : tokens[from]!.start;
  const end = to === tokens.length ? text.length : tokens[to - 1]!.end;
  let out = from > 0 ? '…' : '';
  let k = begin;
  while (k < end) {
    let e = k;
    while (e < end && marked[e] === marked[k]) e++;
    out += marked[k] ? open + text.slice(k, e) + close : text.slice(k, e);
    k = e;
  }
  if (to < tokens.length) out += '…';
  return { text: out.trim(), matched };
}

/** The snippet shown for a hit: the first field (description, title, tags, channel) that matched. */
export function hitSnippet(
  fields: {
    description: string | null;
    title: string | null;
    tags: string | null;
    channelTitle: string | null;
  },
  terms: readonly QueryTerm[],
  marks: readonly [string, string],
): string {
  // Most hits of a selective word match in the title (weighted 10 against the description's 1):
  // a field's snippet is only built once a term matched in it. The tags are parsed only when
  // neither the description nor the title matched.
  const fieldsInOrder = [
    () => fields.description ?? '',
    () => fields.title ?? '',
    () => parseTags(fields.tags).join(', '),
    () => fields.channelTitle ?? '',
  ];
  for (const field of fieldsInOrder) {
    const s = matchedSnippet(field(), terms, marks);
    if (s !== null) return s;
  }
  return snippet(fields.description ?? '', terms, marks).text;
}
