/** The shape of a language's word lists, shared by lexicon.ts and lexicon-world.ts. */

/** The kinds of video the corpus has, each tied to a YouTube category id. */
export type Kind = 'music' | 'gaming' | 'movies' | 'sports' | 'vlog' | 'howto' | 'news' | 'tech';

export interface Lexicon {
  artists: readonly string[];
  songs: readonly string[];
  movies: readonly string[];
  foods: readonly string[];
  cities: readonly string[];
  teams: readonly string[];
  skills: readonly string[];
  topics: readonly string[];
  gadgets: readonly string[];
  titles: Record<Kind, readonly string[]>;
  descriptions: readonly string[];
  tags: Record<Kind, readonly string[]>;
  /** Channel names for the non-music kinds (music channels are the artists). */
  channels: Record<Exclude<Kind, 'music'>, readonly string[]>;
}
