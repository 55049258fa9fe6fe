/**
 * The simulated API methods: parameter checks as the real API makes them, and the JSON bodies,
 * assembled from the corpus's resources as JSON (corpus-json.ts). Quota, keys and faults are the
 * server's business; these handlers only answer.
 */

import { CATEGORIES } from './categories.js';
import { type Corpus, VIDEO_PARTS, type VideoPart, type VideoSeed } from './corpus.js';
import { CorpusJson } from './corpus-json.js';
import { type ApiError, apiErrors } from './envelope.js';
import { CHART_CATEGORIES } from './lexicon.js';
import { Lru } from './lru.js';

export type ApiAnswer = { status: 200; body: string | Buffer } | { status: number; error: ApiError };

export interface Route {
  /** The API method it is, e.g. 'videos.list'. */
  method: string;
  handle(query: URLSearchParams, epoch: number): ApiAnswer;
}

const MAX_IDS = 50;
const CATEGORY_IDS = new Set(CATEGORIES.map((c) => c.id));

class BadRequest extends Error {
  constructor(readonly error: ApiError) {
    super(error.message);
  }
}

function parts<P extends string>(query: URLSearchParams, allowed: readonly P[]): P[] {
  const raw = query.get('part');
  if (raw === null || raw.trim() === '') throw new BadRequest(apiErrors.required('part'));
  const out: P[] = [];
  for (const p of raw.split(',')) {
    const name = p.trim();
    if (!(allowed as readonly string[]).includes(name)) {
      throw new BadRequest(
        apiErrors.invalid('part', `'${name}' is not a valid part for this method.`, 'unknownPart'),
      );
    }
    if (!out.includes(name as P)) out.push(name as P);
  }
  return out;
}

function ids(query: URLSearchParams, param = 'id'): string[] {
  const list = (query.get(param) ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (list.length > MAX_IDS) {
    throw new BadRequest(
      apiErrors.invalid(param, `The ${param} parameter accepts at most ${MAX_IDS} values.`),
    );
  }
  return list;
}

/** `maxResults` within the bounds the discovery document gives the method (videos.list 1–50, search.list 0–50). */
function maxResults(query: URLSearchParams, fallback: number, min: 0 | 1): number {
  const raw = query.get('maxResults');
  if (raw === null) return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < min || n > 50) {
    throw new BadRequest(
      apiErrors.invalid(
        'maxResults',
        `Invalid value '${raw}'. Values must be within the range: [${min}, 50]`,
        'invalidParameter',
      ),
    );
  }
  return n;
}

function regionCode(
  query: URLSearchParams,
  regions: readonly string[],
  required: boolean,
): string | undefined {
  const raw = query.get('regionCode');
  if (raw === null) return required ? (regions.includes('US') ? 'US' : regions[0]) : undefined;
  const r = raw.toUpperCase();
  if (!regions.includes(r)) {
    throw new BadRequest(
      apiErrors.invalid('regionCode', `The regionCode '${raw}' is not available here.`, 'invalidRegionCode'),
    );
  }
  return r;
}

function pageStart(corpus: Corpus, query: URLSearchParams, epoch: number): { epoch: number; offset: number } {
  const token = query.get('pageToken');
  if (token === null || token === '') return { epoch, offset: 0 };
  const parsed = corpus.parsePageToken(token);
  if (!parsed)
    throw new BadRequest(apiErrors.invalid('pageToken', 'The page token is invalid.', 'invalidPageToken'));
  return parsed;
}

function listBody(
  kind: string,
  etag: string,
  /** The items' JSON joined by commas; undefined leaves the `items` key out. */
  items: string | undefined,
  page: { next?: string; prev?: string; total: number; perPage: number; regionCode?: string } | undefined,
): string {
  let head = `{"kind":${JSON.stringify(kind)},"etag":${JSON.stringify(etag)}`;
  if (page?.next !== undefined) head += `,"nextPageToken":${JSON.stringify(page.next)}`;
  if (page?.prev !== undefined) head += `,"prevPageToken":${JSON.stringify(page.prev)}`;
  if (page?.regionCode !== undefined) head += `,"regionCode":${JSON.stringify(page.regionCode)}`;
  if (page) head += `,"pageInfo":{"totalResults":${page.total},"resultsPerPage":${page.perPage}}`;
  return items === undefined ? `${head}}` : `${head},"items":[${items}]}`;
}

function paged(
  corpus: Corpus,
  list: readonly VideoSeed[],
  start: { epoch: number; offset: number },
  per: number,
): { slice: readonly VideoSeed[]; next?: string; prev?: string } {
  const slice = list.slice(start.offset, start.offset + per);
  const out: { slice: readonly VideoSeed[]; next?: string; prev?: string } = { slice };
  if (per > 0 && start.offset + per < list.length)
    out.next = corpus.pageToken(start.epoch, start.offset + per);
  if (start.offset > 0) out.prev = corpus.pageToken(start.epoch, Math.max(0, start.offset - per));
  return out;
}

function guarded(fn: (query: URLSearchParams, epoch: number) => ApiAnswer) {
  return (query: URLSearchParams, epoch: number): ApiAnswer => {
    try {
      return fn(query, epoch);
    } catch (e) {
      if (e instanceof BadRequest) return { status: e.error.status, error: e.error };
      throw e;
    }
  };
}

/** The routes under /youtube/v3/, keyed by the rest of the path. */
export function buildRoutes(corpus: Corpus): Map<string, Route> {
  const json = new CorpusJson(corpus);
  return new Map([
    ['videos', videosRoute(corpus, json)],
    ['videos:batchGetStats', batchGetStatsRoute(corpus, json)],
    ['videoCategories', videoCategoriesRoute(corpus, json)],
    ['channels', channelsRoute(corpus, json)],
    ['search', searchRoute(corpus, json)],
  ]);
}

/** videos.list: a chart page (`chart=mostPopular`) or the videos named by `id`, exactly one of the two. */
function videosRoute(corpus: Corpus, json: CorpusJson): Route {
  // Chart pages are most of the traffic and the same for every caller in a period: keep them encoded.
  const chartPages = new Lru<string, Buffer>(256);
  return {
    method: 'videos.list',
    handle: guarded((q, now) => {
      const p = parts(q, VIDEO_PARTS);
      const chart = q.get('chart');
      const hasIds = q.get('id') !== null;
      if ((chart === null) === !hasIds) {
        throw new BadRequest(
          apiErrors.invalid(
            'chart',
            'Exactly one of the chart or id parameters must be given.',
            'incompatibleParameters',
          ),
        );
      }
      return chart === null
        ? videosById(corpus, json, q, now, p)
        : chartPage(corpus, json, chartPages, q, now, p, chart);
    }),
  };
}

function chartPage(
  corpus: Corpus,
  json: CorpusJson,
  chartPages: Lru<string, Buffer>,
  q: URLSearchParams,
  now: number,
  p: VideoPart[],
  chart: string,
): ApiAnswer {
  if (chart !== 'mostPopular') {
    throw new BadRequest(apiErrors.invalid('chart', `Unsupported chart '${chart}'.`, 'invalidChart'));
  }
  const region = regionCode(q, corpus.regions, true) as string;
  const cat = q.get('videoCategoryId') ?? undefined;
  if (cat !== undefined && !CATEGORY_IDS.has(cat)) {
    throw new BadRequest(
      apiErrors.invalid('videoCategoryId', `Unknown video category '${cat}'.`, 'invalidCategoryId'),
    );
  }
  if (cat !== undefined && !CHART_CATEGORIES.includes(cat))
    return { status: 404, error: apiErrors.chartNotFound() };
  const per = maxResults(q, 5, 1);
  const start = pageStart(corpus, q, now);
  const cacheKey = `${region}|${cat ?? ''}|${start.epoch}|${start.offset}|${per}|${p.join(',')}`;
  const cached = chartPages.get(cacheKey);
  if (cached) return { status: 200, body: cached };
  const list = corpus.chart(region, cat, start.epoch);
  const page = paged(corpus, list, start, per);
  const items = page.slice.map((v) => json.videoJson(v, start.epoch, p)).join(',');
  const etag = json.etag('chart', region, cat ?? '', start.epoch, start.offset);
  const body = listBody('youtube#videoListResponse', etag, items, {
    ...(page.next === undefined ? {} : { next: page.next }),
    ...(page.prev === undefined ? {} : { prev: page.prev }),
    total: list.length,
    perPage: per,
  });
  return { status: 200, body: chartPages.set(cacheKey, Buffer.from(body)) };
}

function videosById(
  corpus: Corpus,
  json: CorpusJson,
  q: URLSearchParams,
  now: number,
  p: VideoPart[],
): ApiAnswer {
  const found: VideoSeed[] = [];
  for (const id of ids(q)) {
    const v = corpus.videoById(id);
    if (v && corpus.exists(v, now)) found.push(v);
  }
  const items = found.map((v) => json.videoJson(v, now, p)).join(',');
  return {
    status: 200,
    body: listBody('youtube#videoListResponse', json.etag('ids', now, items.length), items, {
      total: found.length,
      perPage: found.length,
    }),
  };
}

function batchGetStatsRoute(corpus: Corpus, json: CorpusJson): Route {
  return {
    method: 'videos.batchGetStats',
    handle: guarded((q, now) => {
      const p = parts(q, ['id', 'snippet', 'contentDetails', 'statistics'] as VideoPart[]);
      const list = ids(q);
      if (list.length === 0) throw new BadRequest(apiErrors.required('id'));
      const found = list
        .map((id) => corpus.videoById(id))
        .filter((v): v is VideoSeed => !!v && corpus.exists(v, now));
      const items = found.map((v) => json.videoStatsJson(v, now, p)).join(',');
      return {
        status: 200,
        body: listBody(
          'youtube#batchGetStatsResponse',
          json.etag('stats', now, items.length),
          items,
          undefined,
        ),
      };
    }),
  };
}

function videoCategoriesRoute(corpus: Corpus, json: CorpusJson): Route {
  return {
    method: 'videoCategories.list',
    handle: guarded((q) => {
      parts(q, ['snippet', 'id']);
      const idList = ids(q);
      let region = 'US';
      if (idList.length === 0) {
        if (q.get('regionCode') === null) throw new BadRequest(apiErrors.required('regionCode'));
        region = regionCode(q, corpus.regions, false) ?? region;
      }
      const items = json
        .categoryItems(region)
        .filter((c) => idList.length === 0 || idList.includes(c.id))
        .map((c) => c.json)
        .join(',');
      return {
        status: 200,
        body: listBody('youtube#videoCategoryListResponse', json.etag('cats'), items, undefined),
      };
    }),
  };
}

function channelsRoute(corpus: Corpus, json: CorpusJson): Route {
  return {
    method: 'channels.list',
    handle: guarded((q) => {
      const p = parts(q, ['id', 'snippet', 'statistics']);
      const list = ids(q);
      if (list.length === 0) throw new BadRequest(apiErrors.required('id'));
      const per = maxResults(q, 5, 0);
      const found = list.map((id) => corpus.channel(id)).filter((c) => c !== undefined);
      const items = found.map((c) => json.channelJson(c, p)).join(',');
      // As the real API: pageInfo.resultsPerPage is the request's maxResults (default 5), and an
      // answer with no channel has no `items` key at all.
      const body = listBody(
        'youtube#channelListResponse',
        json.etag('channels', items.length),
        found.length === 0 ? undefined : items,
        { total: found.length, perPage: per },
      );
      return { status: 200, body };
    }),
  };
}

function searchRoute(corpus: Corpus, json: CorpusJson): Route {
  return {
    method: 'search.list',
    handle: guarded((q, now) => {
      parts(q, ['snippet', 'id']);
      const type = q.get('type');
      const region = regionCode(q, corpus.regions, false);
      const per = maxResults(q, 5, 0);
      const start = pageStart(corpus, q, now);
      const list =
        type === null || type.split(',').includes('video')
          ? corpus.search(q.get('q') ?? '', region, start.epoch)
          : [];
      const page = paged(corpus, list, start, per);
      const items = page.slice.map((v) => json.searchResultJson(v)).join(',');
      return {
        status: 200,
        body: listBody('youtube#searchListResponse', json.etag('search', start.epoch, start.offset), items, {
          ...(page.next === undefined ? {} : { next: page.next }),
          ...(page.prev === undefined ? {} : { prev: page.prev }),
          ...(region === undefined ? {} : { regionCode: region }),
          total: list.length,
          // The real API reports resultsPerPage 0 when nothing matched.
          perPage: list.length === 0 ? 0 : per,
        }),
      };
    }),
  };
}
