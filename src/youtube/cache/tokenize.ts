/**
 * The one definition of a searchable word. The index and the query both go through `tokens()`:
 * text is split into tokens here, in JS, and written to the FTS5 tables as those tokens separated
 * by spaces; FTS5's `ascii` tokenizer, which only splits at ASCII spaces and punctuation and only
 * folds ASCII case, then stores exactly these tokens (a token never contains ASCII punctuation or
 * an upper-case ASCII letter). A query's words go through the same function, so a word typed by a
 * user and the same word in a title are the same token by construction.
 *
 * Per token:
 * 1. NFKC (full-width `ＭＶ` = `MV`, half-width katakana, ligatures, presentation forms);
 * 2. lower case (`ß` → `ss`, Greek final `ς` → `σ`);
 * 3. marks dropped only where they are accents a reader may leave out: after Latin and Greek
 *    letters every mark (`Pokémon` = `pokemon`, `τραγούδι` = `τραγουδι`); after Cyrillic letters
 *    stress marks, and `ё` = `е` (`й` stays `й`); the Devanagari nukta (`ख़` = `ख`); Arabic
 *    harakat and tatweel, Hebrew points. Indic vowel signs and viramas, Thai vowels and tones
 *    and every letter are kept. Hangul is recomposed (never left as loose jamo);
 * 4. scripts written without spaces are split: Han and hiragana into words with ICU's dictionary
 *    (`Intl.Segmenter`); katakana, Thai, Lao, Khmer and Myanmar runs into overlapping pairs of
 *    letters (grapheme clusters), so any word of two letters or more finds every text that holds
 *    it: ICU keeps katakana compounds whole (`ミュージックビデオ`), and its Thai dictionary splits
 *    a word differently depending on the words around it (measured: 1.25 % of Thai words taken
 *    from titles were not found). A change of script also ends a token (`MV公開` = `mv` + `公開`).
 *
 * ICU's dictionaries can change with Node's ICU, so `TOKENIZER_VERSION` includes the ICU and
 * Unicode versions; a cache indexed under another version is re-indexed on open.
 */

import type { Database } from 'better-sqlite3';

/** Bump when the rules below change: caches indexed with other rules are re-indexed on open. */
const RULES = 2;
export const TOKENIZER_VERSION = `${RULES}/icu-${process.versions.icu ?? 'none'}/unicode-${process.versions.unicode ?? '?'}`;

/** Letters, digits, marks, private use, and the invisible joiners that may sit inside a word. */
const RAW = /(?:[\p{L}\p{N}\p{M}\p{Co}\u00AD\u2060]|\u200C|\u200D)+/gu;
/** Dropped anywhere: soft hyphen, joiners, variation selectors. */
const INVISIBLE = /[\u00AD\u2060]|\u200C|\u200D|\p{Variation_Selector}/gu;
/** After NFD: marks that follow a Latin or Greek letter (every one), a Cyrillic letter (stress only). */
const LATIN_GREEK_MARKS = /([\p{Script=Latin}\p{Script=Greek}])\p{M}+/gu;
const CYRILLIC_STRESS = /(\p{Script=Cyrillic})[\u0300\u0301]+/gu;
/** Devanagari nukta, Arabic harakat (incl. hamza marks) and tatweel, Hebrew points and cantillation. */
const OPTIONAL_MARKS = /[\u093C\u064B-\u065F\u0670\u0640\u0591-\u05BD\u05BF\u05C1\u05C2\u05C4\u05C5\u05C7]/gu;
const LETTER_FOLDS: Record<string, string> = {
  ß: 'ss',
  ς: 'σ',
  ø: 'o',
  đ: 'd',
  ł: 'l',
  ı: 'i',
  æ: 'ae',
  œ: 'oe',
};
const LETTER_FOLD = /[ßςøđłıæœ]/gu;
/** A folded word: letters, digits, kept marks. */
const WORD = /[\p{L}\p{N}\p{M}\p{Co}]+/gu;

/**
 * Script classes whose change ends a token: `dict` runs go through ICU's dictionary, `pairs` runs
 * (katakana; Thai, Lao, Khmer, Myanmar) into overlapping pairs of letters.
 */
const CLASS_RUN =
  /(?<kana>[\p{Script=Katakana}\u30FC]+)|(?<sea>[\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]+)|(?<dict>[\p{Script=Han}\p{Script=Hiragana}\u30FC]+)|(?<hangul>\p{Script=Hangul}+)|(?<other>[^\p{Script=Katakana}\p{Script=Han}\p{Script=Hiragana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\p{Script=Hangul}\u30FC]+)/gu;
const NEEDS_CLASSES =
  /[\p{Script=Katakana}\p{Script=Han}\p{Script=Hiragana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\p{Script=Hangul}]/u;
const words = new Intl.Segmenter('und', { granularity: 'word' });
const graphemes = new Intl.Segmenter('und', { granularity: 'grapheme' });

/** One token with where it came from in the original text (for highlighting). */
export interface Token {
  token: string;
  start: number;
  end: number;
}

const isAsciiAlnum = (c: number): boolean =>
  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 127) return false;
  return true;
}

/**
 * Whether every character of `s` is one that folding leaves as it is, alone and next to any other
 * such character: CJK ideographs, hiragana, katakana letters and `ー`, Hangul syllables (no case,
 * no marks; NFKC and NFD + NFC give them back unchanged; checked character by character in the
 * tests). Their words skip the normalizations of `foldWord`.
 */
export function foldsToItself(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (
      !(
        (c >= 0x4e00 && c <= 0x9fff) ||
        (c >= 0x3400 && c <= 0x4dbf) ||
        (c >= 0x3041 && c <= 0x3096) ||
        (c >= 0x30a1 && c <= 0x30fa) ||
        c === 0x30fc ||
        (c >= 0xac00 && c <= 0xd7a3)
      )
    ) {
      return false;
    }
  }
  return true;
}

/** Fold one word (steps 1–3). May return several words when NFKC introduces a separator (`⑴`). */
function foldWord(raw: string): string[] {
  let s = raw.normalize('NFKC').toLowerCase().replace(INVISIBLE, '');
  if (!isAscii(s)) {
    s = s
      .normalize('NFD')
      .replace(LATIN_GREEK_MARKS, '$1')
      .replace(CYRILLIC_STRESS, '$1')
      .replace(/([еЕ])\u0308/gu, '$1')
      .replace(OPTIONAL_MARKS, '')
      .normalize('NFC')
      .replace(LETTER_FOLD, (c) => LETTER_FOLDS[c]!);
  }
  return s.match(WORD) ?? [];
}

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

/**
 * Thai grapheme clusters without ICU: a cluster is a letter with the marks that follow it (U+0E31,
 * U+0E33, U+0E34–U+0E3A, U+0E47–U+0E4E join the cluster before them; every other Thai character
 * starts one). The same clusters as `Intl.Segmenter`'s (checked for every Thai character, alone
 * and in pairs and triples, in the tests), at a tenth of the cost. `undefined` when `run` holds a
 * character that is not Thai (Lao, Khmer, Myanmar go through ICU).
 */
export function thaiClusters(run: string): string[] | undefined {
  const out: string[] = [];
  for (let i = 0; i < run.length; i++) {
    const c = run.charCodeAt(i);
    if (c < 0x0e01 || c > 0x0e5b) return undefined;
    const ch = String.fromCharCode(c);
    const last = out.length - 1;
    if (
      last >= 0 &&
      (c === 0x0e31 || c === 0x0e33 || (c >= 0x0e34 && c <= 0x0e3a) || (c >= 0x0e47 && c <= 0x0e4e))
    ) {
      out[last] = out[last] + ch;
    } else {
      out.push(ch);
    }
  }
  return out;
}

/** Split a folded word at script changes; segment the scripts written without spaces (step 4). */
function splitWord(word: string, push: (token: string, from: number, to: number) => void): void {
  if (!NEEDS_CLASSES.test(word)) {
    push(word, 0, word.length);
    return;
  }
  for (const m of word.matchAll(CLASS_RUN)) {
    const run = m[0];
    const at = m.index;
    const g = m.groups!;
    if (g.kana !== undefined || g.sea !== undefined) {
      // Letters: code points for katakana, grapheme clusters (a consonant with its vowel and tone
      // marks) for the scripts of South-East Asia.
      const letters =
        g.kana !== undefined
          ? Array.from(run)
          : (thaiClusters(run) ?? Array.from(graphemes.segment(run), (x) => x.segment));
      if (letters.length === 1) push(run, at, at + run.length);
      let offset = at;
      for (let i = 0; i + 1 < letters.length; i++) {
        push(letters[i]! + letters[i + 1]!, offset, offset + letters[i]!.length + letters[i + 1]!.length);
        offset += letters[i]!.length;
      }
    } else if (g.dict !== undefined) {
      for (const s of words.segment(run)) {
        if (LETTER_OR_DIGIT.test(s.segment)) push(s.segment, at + s.index, at + s.index + s.segment.length);
      }
    } else {
      push(run, at, at + run.length);
    }
  }
}

/** A word's tokens with their place in the word. */
type WordSpans = ReadonlyArray<{ token: string; from: number; to: number }>;

/** Words repeat (Zipf): the tokens of recently seen words are kept. */
const MEMO_MAX = 15_000;

/**
 * A map of recent keys in two generations: when the young one is full it becomes the old one (the
 * older is dropped), and a key found in the old one moves back to the young one, so the words a
 * corpus keeps using stay while one-off ones go.
 */
class Memo<V> {
  #young = new Map<string, V>();
  #old = new Map<string, V>();

  get(key: string): V | undefined {
    const v = this.#young.get(key);
    if (v !== undefined) return v;
    const o = this.#old.get(key);
    if (o !== undefined) this.set(key, o);
    return o;
  }

  set(key: string, value: V): void {
    if (this.#young.size >= MEMO_MAX) {
      this.#old = this.#young;
      this.#young = new Map();
    }
    this.#young.set(key, value);
  }
}

const memo = new Memo<WordSpans>();

/** The tokens of one raw word (a match of RAW), with their place in it. */
function wordSpans(raw: string): WordSpans {
  let spans = memo.get(raw);
  if (spans !== undefined) return spans;
  if (isAscii(raw)) {
    // ASCII letters and digits: NFKC changes nothing and no script needs splitting.
    spans = [{ token: raw.toLowerCase(), from: 0, to: raw.length }];
  } else {
    const out: Array<{ token: string; from: number; to: number }> = [];
    const words = foldsToItself(raw) ? [raw] : foldWord(raw);
    // Places inside the word are exact when folding kept its length (almost always); otherwise
    // every token of the word points at the whole word.
    const exact = words.length === 1 && words[0]!.length === raw.length;
    for (const w of words) {
      splitWord(w, (token, from, to) =>
        out.push(exact ? { token, from, to } : { token, from: 0, to: raw.length }),
      );
    }
    spans = out;
  }
  memo.set(raw, spans);
  return spans;
}

/**
 * Calls `visit` for every token of `text`, in order, with its place. Runs of ASCII letters and
 * digits are tokens as they are (lower-cased) without a regular expression; a run holding a
 * non-ASCII character (extended over the ASCII letters and digits around it, so it starts and
 * ends where no word can continue) goes through RAW and the word rules.
 */
function eachToken(text: string, visit: (token: string, start: number, end: number) => void): void {
  const n = text.length;
  let i = 0;
  while (i < n) {
    let c = text.charCodeAt(i);
    if (c < 128 && !isAsciiAlnum(c)) {
      i++;
      continue;
    }
    let j = i;
    let ascii = true;
    while (j < n) {
      c = text.charCodeAt(j);
      if (c >= 128) ascii = false;
      else if (!isAsciiAlnum(c)) break;
      j++;
    }
    if (ascii) visit(text.slice(i, j).toLowerCase(), i, j);
    else visitRun(text, i, j, visit);
    i = j;
  }
}

/** Every token of `text`, in order, with its place in `text`. */
export function tokenSpans(text: string): Token[] {
  const out: Token[] = [];
  eachToken(text, (token, start, end) => out.push({ token, start, end }));
  return out;
}

/** The tokens of `text[i, j)`, a run holding a non-ASCII character, through RAW and the word rules. */
function visitRun(
  text: string,
  i: number,
  j: number,
  visit: (token: string, start: number, end: number) => void,
): void {
  const run = text.slice(i, j);
  for (const m of run.matchAll(RAW)) {
    const at = i + m.index;
    for (const s of wordSpans(m[0])) visit(s.token, at + s.from, at + s.to);
  }
}

const NON_ASCII = /[^\0-\x7F]/g;
/** Tokens of recently seen non-ASCII runs (a run is whole words, so its tokens are the same alone). */
const runTokenMemo = new Memo<string[]>();

/**
 * The tokens of `text` that come from its runs holding a non-ASCII character, in order; the tokens
 * of its pure ASCII runs, which are those runs lower-cased, are left out (a caller looks for them
 * in the lower-cased text). The runs are those of `eachToken` (the longest stretches of ASCII
 * letters, digits and non-ASCII characters), found from their non-ASCII characters.
 */
export function nonAsciiTokens(text: string): string[] {
  const out: string[] = [];
  const inRun = (c: number) => c >= 128 || isAsciiAlnum(c);
  NON_ASCII.lastIndex = 0;
  for (let m = NON_ASCII.exec(text); m !== null; m = NON_ASCII.exec(text)) {
    let i = m.index;
    while (i > 0 && inRun(text.charCodeAt(i - 1))) i--;
    let j = m.index + 1;
    while (j < text.length && inRun(text.charCodeAt(j))) j++;
    const run = text.slice(i, j);
    let runTokens = runTokenMemo.get(run);
    if (runTokens === undefined) {
      runTokens = tokens(run);
      runTokenMemo.set(run, runTokens);
    }
    for (const t of runTokens) out.push(t);
    NON_ASCII.lastIndex = j;
  }
  return out;
}

/** The tokens of `text`, in order: what the index stores and what a query looks for. */
export function tokens(text: string): string[] {
  const out: string[] = [];
  eachToken(text, (token) => out.push(token));
  return out;
}

/** Index text of recently seen non-ASCII runs (mostly single words). */
const runMemo = new Memo<string>();

/**
 * The text written to an FTS5 column: `text`'s tokens separated by spaces, for FTS5's `ascii`
 * tokenizer. Pure ASCII text is handed over as it is (`ascii` splits and folds it the same way),
 * and so are the ASCII words of mixed text: only runs with a non-ASCII character, extended over
 * the ASCII letters and digits around them, are rewritten. Such a run starts and ends at ASCII
 * punctuation, a space or the end of the text, which never fall inside a word, so it holds whole
 * words only. (Written as loops: this runs for every column of every ingested video.)
 */
export function indexText(text: string | null): string | null {
  if (text === null) return null;
  const n = text.length;
  let i = 0;
  while (i < n && text.charCodeAt(i) < 128) i++;
  if (i === n) return text;
  let out = '';
  let done = 0;
  while (i < n) {
    let start = i;
    while (start > done && isAsciiAlnum(text.charCodeAt(start - 1))) start--;
    let end = i;
    while (end < n) {
      const c = text.charCodeAt(end);
      if (c < 128 && !isAsciiAlnum(c)) break;
      end++;
    }
    const run = text.slice(start, end);
    let words = runMemo.get(run);
    if (words === undefined) {
      words = tokens(run).join(' ');
      runMemo.set(run, words);
    }
    out += `${text.slice(done, start)} ${words} `;
    done = end;
    i = end;
    while (i < n && text.charCodeAt(i) < 128) i++;
  }
  return out + text.slice(done);
}

/** The SQL function that turns a column's text into its index text (`indexText`). */
const INDEX_TEXT_FN = 'qg_index_text';

/** Make `qg_index_text(text)` available on this connection (the index is fed from `videos` in SQL). */
export function registerIndexText(db: Database): void {
  db.function(INDEX_TEXT_FN, { deterministic: true }, (v: unknown) =>
    typeof v === 'string' ? indexText(v) : null,
  );
}

/**
 * SQL for a column's index text: ASCII text (as many bytes as characters) as it is, without a
 * call into JS, which costs about a microsecond per value; the rest through `indexText`.
 */
export function indexTextSql(expr: string): string {
  return `CASE WHEN octet_length(${expr}) = length(${expr}) THEN ${expr} ELSE ${INDEX_TEXT_FN}(${expr}) END`;
}
