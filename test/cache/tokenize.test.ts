import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openCache } from '../../src/youtube/cache/index.js';
import {
  foldsToItself,
  indexText,
  TOKENIZER_VERSION,
  thaiClusters,
  tokenSpans,
  tokens,
} from '../../src/youtube/cache/tokenize.js';
import { ftsContentCheck, tempDir, video } from './helpers.js';

describe('tokens', () => {
  it('folds case and accents in Latin, Greek and Cyrillic, and keeps letters that are letters', () => {
    expect(tokens('Pokémon ÉCOLE naïve Ångström İstanbul STRASSE straße')).toEqual([
      'pokemon',
      'ecole',
      'naive',
      'angstrom',
      'istanbul',
      'strasse',
      'strasse',
    ]);
    expect(tokens('ΤΡΑΓΟΎΔΙ τραγούδι ΟΔΟΣ')).toEqual(['τραγουδι', 'τραγουδι', 'οδοσ']);
    expect(tokens('Официальный ЙОГУРТ Ёлка ёлка́')).toEqual(['официальный', 'йогурт', 'елка', 'елка']);
  });

  it('keeps Indic vowel signs and viramas, and the nukta forms of Devanagari match their base letters', () => {
    expect(tokens('आधिकारिक ट्रेलर')).toEqual(['आधिकारिक', 'ट्रेलर']);
    expect(tokens('ख़बर')).toEqual(tokens('खबर'));
    // Precomposed (U+0959) and decomposed (U+0916 U+093C) nukta letters are one token.
    expect(tokens('\u0959')).toEqual(tokens('\u0916\u093C'));
    expect(tokens('நடிகர் விஜய் பாடல்')).toEqual(['நடிகர்', 'விஜய்', 'பாடல்']);
    expect(tokens('নতুন গান')).toEqual(['নতুন', 'গান']);
  });

  it('drops optional Arabic and Hebrew marks but no letter', () => {
    expect(tokens('مُحَمَّد')).toEqual(['محمد']);
    expect(tokens('أغنية رسمية')).toEqual(['اغنية', 'رسمية']);
    expect(tokens('שִׁיר רשמי')).toEqual(['שיר', 'רשמי']);
  });

  it('keeps Hangul syllables whole (never loose jamo), composed or not', () => {
    expect(tokens('방탄소년단 뮤직비디오')).toEqual(['방탄소년단', '뮤직비디오']);
    expect(tokens('뮤직'.normalize('NFD'))).toEqual(['뮤직']);
  });

  it('splits scripts written without spaces into words, katakana and Thai into overlapping pairs', () => {
    expect(tokens('官方音乐视频')).toEqual(['官方', '音乐', '视频']);
    // Thai: pairs of grapheme clusters (a consonant with its vowel and tone marks).
    expect(tokens('เพลง')).toEqual(['เพ', 'พล', 'ลง']);
    expect(tokens('ล่าสุด')).toEqual(['ล่า', 'าสุ', 'สุด']);
    const thai = tokens('เพลงใหม่ล่าสุด มิวสิควิดีโอ ทางการ').join(' ');
    for (const word of ['เพลง', 'ใหม่', 'ล่าสุด', 'มิวสิค', 'วิดีโอ', 'ทางการ']) {
      expect(` ${thai} `).toContain(` ${tokens(word).join(' ')} `);
    }
    expect(tokens('【公式】新曲ビデオ')).toEqual(['公式', '新曲', 'ビデ', 'デオ']);
    // A word's tokens appear in a longer text's tokens, in order.
    const inTitle = tokens('【公式】新曲ミュージックビデオ').join(' ');
    for (const word of ['公式', 'ミュージック', 'ビデオ', '新曲']) {
      expect(` ${inTitle} `).toContain(` ${tokens(word).join(' ')} `);
    }
  });

  it('ends a token where the script changes; full-width is folded', () => {
    expect(tokens('ＭＶ公開 BTS방탄소년단 2024年')).toEqual([
      'mv',
      '公開',
      'bts',
      '방탄소년단',
      '2024',
      '年',
    ]);
  });

  it('ignores emoji and punctuation; invisible joiners do not split words', () => {
    expect(tokens('🎵🔥 — !!')).toEqual([]);
    expect(tokens('co\u00ADop क्\u200Dष')).toEqual(['coop', 'क्ष']);
  });

  it('index text holds exactly the tokens, for the ascii tokenizer', () => {
    const texts = ['Plain ASCII, Title!', 'Pokémon — «live» 公式ミュージック', '🎵 x—y', 'ａｂｃ①'];
    for (const t of texts) {
      const out = indexText(t)!;
      // What FTS5's ascii tokenizer does: split at ASCII non-alphanumerics, fold ASCII case.
      const split = out
        .split(/[^A-Za-z0-9\u0080-\u{10FFFF}]+/u)
        .filter(Boolean)
        .map((w) => w.toLowerCase());
      expect(split).toEqual(tokens(t));
    }
    expect(indexText('only ascii here')).toBe('only ascii here');
    expect(indexText(null)).toBeNull();
  });

  it('spans point at the original text', () => {
    const text = 'Pokémon 公式ミュージック';
    for (const s of tokenSpans(text)) {
      expect(tokens(text.slice(s.start, s.end)).join('')).toContain(s.token.slice(0, 1));
    }
    expect(tokenSpans(text).map((s) => s.token)).toEqual(tokens(text));
  });
});

describe('fast paths give what the general rules give', () => {
  it("Thai clusters are ICU's grapheme clusters: every Thai character alone, in pairs, and in random runs", () => {
    const icu = new Intl.Segmenter('und', { granularity: 'grapheme' });
    const clusters = (s: string) => Array.from(icu.segment(s), (x) => x.segment);
    const thai: string[] = [];
    for (let c = 0x0e00; c <= 0x0e7f; c++) {
      const ch = String.fromCharCode(c);
      if (/\p{Script=Thai}/u.test(ch)) thai.push(ch);
    }
    expect(thai.length).toBeGreaterThan(80);
    for (const a of thai) {
      expect(thaiClusters(a)).toEqual(clusters(a));
      for (const b of thai) expect(thaiClusters(a + b)).toEqual(clusters(a + b));
    }
    let seed = 7;
    const next = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    for (let k = 0; k < 20_000; k++) {
      let s = '';
      for (let n = 3 + Math.floor(next() * 8); n > 0; n--) s += thai[Math.floor(next() * thai.length)];
      expect(thaiClusters(s)).toEqual(clusters(s));
    }
    // Lao, Khmer, Myanmar are left to ICU.
    expect(thaiClusters('ສະບາຍ')).toBeUndefined();
  });

  it('ideographs, kana and Hangul syllables taken as they are need no folding', () => {
    const ranges = [
      [0x4e00, 0x9fff],
      [0x3400, 0x4dbf],
      [0x3041, 0x3096],
      [0x30a1, 0x30fa],
      [0x30fc, 0x30fc],
      [0xac00, 0xd7a3],
    ];
    for (const [from, to] of ranges) {
      for (let c = from!; c <= to!; c++) {
        const ch = String.fromCharCode(c);
        expect(foldsToItself(ch)).toBe(true);
        // Every step of the fold gives the character back, and it is a letter, not a mark.
        const same =
          ch.normalize('NFKC') === ch &&
          ch.toLowerCase() === ch &&
          ch.normalize('NFD').normalize('NFC') === ch &&
          /^\p{L}$/u.test(ch) &&
          !/\p{M}/u.test(ch);
        if (!same) expect(`U+${c.toString(16)}`).toBe('a character folding leaves as it is');
      }
    }
    for (const s of ['ｶ', 'ゟ', 'ヿ', '・', '\u3099', '\u1100', '㈀', '\uF900', 'a', 'é'])
      expect(foldsToItself(s)).toBe(false);
    expect(tokens('がガ가')).toEqual(
      tokens('が'.normalize('NFD') + 'ガ'.normalize('NFD') + '가'.normalize('NFD')),
    );
  });
});

describe('schema 2: the index holds these tokens', () => {
  let cleanup: (() => void) | undefined;
  afterEach(() => cleanup?.());

  it('a cache indexed by version 1 (FTS5 unicode61) is migrated and re-indexed on open, regions onto the rows', () => {
    const t = tempDir();
    cleanup = t.cleanup;
    const path = join(t.dir, 'cache.db');
    const cache = openCache(path);
    cache.ingestTrendingPage({
      region: 'IN',
      fetchedAt: 1_700_000_000_000,
      rankOffset: 0,
      videos: [
        video('a', { title: 'आधिकारिक ट्रेलर | शेरदिल' }),
        video('b', { title: '방탄소년단 뮤직비디오' }),
        video('c', { title: 'Pokémon world record' }),
      ],
    });
    cache.close();
    // Turn the file back into a version 1 cache: unicode61 index over the content table.
    const db = new Database(path);
    const cols = 'title, tags, description, channel_title';
    db.exec(`DROP TABLE videos_fts; DROP TABLE hot_fts;
      CREATE VIRTUAL TABLE videos_fts USING fts5(${cols}, content = 'videos', content_rowid = 'vid', tokenize = 'unicode61 remove_diacritics 2');
      CREATE VIRTUAL TABLE hot_fts USING fts5(${cols}, content = 'videos', content_rowid = 'vid', tokenize = 'unicode61 remove_diacritics 2');
      INSERT INTO videos_fts (videos_fts) VALUES ('rebuild');
      DELETE FROM meta WHERE key = 'tokenizer';
      ALTER TABLE videos DROP COLUMN regions;
      PRAGMA user_version = 1;`);
    db.close();

    const again = openCache(path);
    expect(again.stats().schemaVersion).toBe(3);
    expect(again.search('आधिकारिक').hits.map((h) => [h.id, h.regions])).toEqual([['a', ['IN']]]);
    expect(again.search('뮤직비디오').hits.map((h) => h.id)).toEqual(['b']);
    expect(again.search('pokemon').hits.map((h) => h.id)).toEqual(['c']);
    again.close();
    expect(ftsContentCheck(path)).toBe(3);
  });

  it('a cache indexed under another tokenizer version (another ICU) is re-indexed on open', () => {
    const t = tempDir();
    cleanup = t.cleanup;
    const path = join(t.dir, 'cache.db');
    const cache = openCache(path);
    cache.upsertVideos([video('a', { title: '官方音乐视频' })]);
    cache.close();
    const db = new Database(path);
    // An index written under other rules: a token no query produces now.
    db.exec(`INSERT INTO videos_fts (videos_fts) VALUES ('delete-all'); INSERT INTO videos_fts (rowid, title) VALUES (1, '官方音乐视频');
      UPDATE meta SET value = 'other' WHERE key = 'tokenizer';`);
    db.close();
    const again = openCache(path);
    expect(again.search('音乐').hits.map((h) => h.id)).toEqual(['a']);
    again.close();
    const check = new Database(path);
    expect(check.prepare(`SELECT value FROM meta WHERE key = 'tokenizer'`).pluck().get()).toBe(
      TOKENIZER_VERSION,
    );
    check.close();
    expect(ftsContentCheck(path)).toBe(1);
  });
});
