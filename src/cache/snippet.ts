/**
 * Snippets with the matched words highlighted, computed from the stored text in JS with the
 * tokens of the index (tokenize.ts) and the same term semantics (word, prefix, phrase). FTS5's
 * snippet() would have to set up every term's iterator across every index segment for each hit,
 * which costs more than the ranking for rare words; the hits are only a page of rows.
 */
import type { QueryTerm } from './query.js';
import { type Token, tokenSpans } from './tokenize.js';
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

/** The snippet of `text` when a term matches in it, else null (without building the unmatched one). */
function matchedSnippet(
  text: string,
  terms: readonly QueryTerm[],
  marks: readonly [string, string],
): string | null {
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
  const hit = Array.from(group, (g) => g >= 0);
  let from = 0;
  let to = tokens.length;
  if (tokens.length > maxTokens) {
    let best = 0;
    let count = 0;
    for (let i = 0; i < maxTokens; i++) if (hit[i]) count++;
    let bestCount = count;
    for (let i = 1; i + maxTokens <= tokens.length; i++) {
      if (hit[i - 1]) count--;
      if (hit[i + maxTokens - 1]) count++;
      if (count > bestCount) {
        bestCount = count;
        best = i;
      }
    }
    // Start a few tokens before the window's first match, so the match has some context.
    const first = hit.indexOf(true, best);
    if (first >= 0) best = Math.min(Math.max(0, first - 3), tokens.length - maxTokens);
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
