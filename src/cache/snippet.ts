/**
 * Snippets with the matched words highlighted, computed from the stored text in JS: the same
 * folding as the query (case and diacritics), the same term semantics (word, prefix, phrase).
 * FTS5's snippet() would have to set up every term's iterator across every index segment for each
 * hit, which costs more than the ranking for rare words; the hits are only a page of rows.
 */
import { fold, type QueryTerm } from './query.js';
import { parseTags } from './video.js';

const TOKEN = /[\p{L}\p{N}\p{Co}][\p{L}\p{N}\p{Co}\p{M}]*/gu;

interface Token {
  start: number;
  end: number;
  folded: string;
}

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  for (const m of text.matchAll(TOKEN)) {
    out.push({ start: m.index, end: m.index + m[0].length, folded: fold(m[0]) });
  }
  return out;
}

/** Per token: -1, or the index of the first token of the match it belongs to (a phrase spans several). */
function matches(tokens: Token[], terms: readonly QueryTerm[]): Int32Array {
  const hit = new Int32Array(tokens.length).fill(-1);
  for (const term of terms) {
    const n = term.tokens.length;
    for (let i = 0; i + n <= tokens.length; i++) {
      let ok = true;
      for (let k = 0; k < n && ok; k++) {
        const want = term.tokens[k]!;
        const got = tokens[i + k]!.folded;
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
  [open, close]: readonly [string, string],
  maxTokens = 24,
): Snippet {
  const tokens = tokenize(text);
  if (tokens.length === 0) return { text: text.trim(), matched: false };
  const group = matches(tokens, terms);
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
  let out = from > 0 ? '…' : '';
  let cursor = tokens[from]!.start;
  if (from === 0) out += text.slice(0, cursor);
  let matched = false;
  for (let i = from; i < to; i++) {
    const t = tokens[i]!;
    out += text.slice(cursor, t.start);
    if (hit[i]) {
      matched = true;
      // The tokens of one phrase match share one highlight.
      let j = i;
      while (j + 1 < to && group[j + 1] === group[i]) j++;
      out += open + text.slice(t.start, tokens[j]!.end) + close;
      cursor = tokens[j]!.end;
      i = j;
    } else {
      out += text.slice(t.start, t.end);
      cursor = t.end;
    }
  }
  out += to < tokens.length ? '…' : text.slice(cursor);
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
  const tags = parseTags(fields.tags).join(', ');
  const description = snippet(fields.description ?? '', terms, marks);
  if (description.matched) return description.text;
  for (const field of [fields.title ?? '', tags, fields.channelTitle ?? '']) {
    const s = snippet(field, terms, marks);
    if (s.matched) return s.text;
  }
  return description.text;
}
