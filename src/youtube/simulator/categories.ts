/**
 * YouTube's video categories as `videoCategories.list` gives them (ids, English titles, whether a
 * video may be assigned one). The US list has 32; other regions have the same list without 29
 * "Nonprofits & Activism" (31), as the recorded answers in test/fixtures/youtube/ show.
 */
export interface Category {
  id: string;
  title: string;
  assignable: boolean;
}

const TITLES: ReadonlyArray<readonly [string, string]> = [
  ['1', 'Film & Animation'],
  ['2', 'Autos & Vehicles'],
  ['10', 'Music'],
  ['15', 'Pets & Animals'],
  ['17', 'Sports'],
  ['18', 'Short Movies'],
  ['19', 'Travel & Events'],
  ['20', 'Gaming'],
  ['21', 'Videoblogging'],
  ['22', 'People & Blogs'],
  ['23', 'Comedy'],
  ['24', 'Entertainment'],
  ['25', 'News & Politics'],
  ['26', 'Howto & Style'],
  ['27', 'Education'],
  ['28', 'Science & Technology'],
  ['29', 'Nonprofits & Activism'],
  ['30', 'Movies'],
  ['31', 'Anime/Animation'],
  ['32', 'Action/Adventure'],
  ['33', 'Classics'],
  ['34', 'Comedy'],
  ['35', 'Documentary'],
  ['36', 'Drama'],
  ['37', 'Family'],
  ['38', 'Foreign'],
  ['39', 'Horror'],
  ['40', 'Sci-Fi/Fantasy'],
  ['41', 'Thriller'],
  ['42', 'Shorts'],
  ['43', 'Shows'],
  ['44', 'Trailers'],
];

/** Categories a creator may not pick (the movie genres, shows, shorts, trailers, …). */
const NOT_ASSIGNABLE = new Set(['18', '21', ...Array.from({ length: 15 }, (_, i) => String(30 + i))]);

/** Every category id the API knows, in its order. */
export const CATEGORIES: readonly Category[] = TITLES.map(([id, title]) => ({
  id,
  title,
  assignable: !NOT_ASSIGNABLE.has(id),
}));

/** Only offered in the US. */
const US_ONLY = new Set(['29']);

/** The categories `videoCategories.list?regionCode=R` lists. */
export function categoriesFor(region: string): readonly Category[] {
  return region === 'US' ? CATEGORIES : CATEGORIES.filter((c) => !US_ONLY.has(c.id));
}
