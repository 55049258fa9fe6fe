/**
 * The YouTube Data API v3 client: one undici Pool per base URL with keep-alive, a bounded number of
 * connections and explicit connect / headers / body timeouts.
 *
 * Each method makes exactly one HTTP request (no hidden retries, no hidden pagination) because the
 * upstream charges every request it receives: the guard spends once per attempt and composes
 * retries itself (see retry.ts). Each method carries its API method name (`apiMethod`) so the guard
 * can look up its bucket and cost in config; what a method costs is not the client's business.
 */
import { buildConnector, Pool } from 'undici';
import type { z } from 'zod';
import { positiveIntOption } from '../../argument-checks.js';
import { QuotaGuardError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { UpstreamError } from '../../outcome/errors.js';
import { type BoundedAnswer, boundedGet, rememberConnectFailures } from '../../outcome/transport.js';
import {
  DEFAULT_BASE_URL,
  DEFAULT_UPSTREAM_DEADLINE_MS,
  DEFAULT_UPSTREAM_MAX_RESPONSE_BYTES,
} from '../defaults.js';
import { badResponse, type CallContext, errorFromResponse } from './classify.js';
import { redactKeyParam, redactText } from './redact.js';
import {
  type BatchGetStatsResponse,
  BatchGetStatsResponseSchema,
  type ChannelListResponse,
  ChannelListResponseSchema,
  type SearchListResponse,
  SearchListResponseSchema,
  type VideoCategoryListResponse,
  VideoCategoryListResponseSchema,
  type VideoListResponse,
  VideoListResponseSchema,
} from './schemas.js';

export { DEFAULT_BASE_URL };

export interface UpstreamTimeouts {
  /** TCP (and TLS) connection establishment. */
  connectMs: number;
  /** From the request written to the response headers received. */
  headersMs: number;
  /** Longest gap between two chunks of the response body. */
  bodyMs: number;
  /**
   * The whole request, connect + headers + body: an upstream that drips a byte every few seconds
   * never trips `bodyMs`, this ends it (`QG_UPSTREAM_DEADLINE`).
   */
  totalMs: number;
}

export const DEFAULT_TIMEOUTS: UpstreamTimeouts = {
  connectMs: 5_000,
  headersMs: 15_000,
  bodyMs: 15_000,
  totalMs: DEFAULT_UPSTREAM_DEADLINE_MS,
};

/** The client's logger: redacted request lines at debug, failures at warn. */
export type UpstreamLogger = Logger;

export interface YouTubeClientOptions {
  /** Default `https://www.googleapis.com/youtube/v3`; the simulator's `url` in tests and the demo. */
  baseUrl?: string;
  /** Sent as the `key` query parameter; never logged or thrown. */
  apiKey: string;
  /** Most connections the pool opens to the base URL (default 8). */
  connections?: number;
  timeouts?: Partial<UpstreamTimeouts>;
  /** How long an idle connection is kept for reuse (default 30 s; the server's hint caps it). */
  keepAliveMs?: number;
  /**
   * The largest response body read (default 8 MiB): reading stops there and the call fails with
   * `QG_UPSTREAM_TOO_LARGE` (a real page is well under 1 MB).
   */
  maxResponseBytes?: number;
  /** One debug line per request and one warn line per failure, URLs redacted. */
  logger?: UpstreamLogger;
}

export interface CallOptions {
  signal?: AbortSignal;
}

/** The API method each client method calls: what the guard looks up in config. */
export const YOUTUBE_API_METHODS = {
  videosListChart: 'videos.list',
  videosListByIds: 'videos.list',
  videosBatchGetStats: 'videos.batchGetStats',
  videoCategoriesList: 'videoCategories.list',
  channelsList: 'channels.list',
  searchList: 'search.list',
} as const;

export type YouTubeMethodName = keyof typeof YOUTUBE_API_METHODS;
export type ApiMethod = (typeof YOUTUBE_API_METHODS)[YouTubeMethodName];

/** A client method: one HTTP request, tagged with the API method it calls. */
export type ApiCall<P, R> = ((params: P, options?: CallOptions) => Promise<R>) & {
  readonly apiMethod: ApiMethod;
};

export interface ChartParams {
  regionCode: string;
  /** Selects one of the category charts (e.g. '10' music, '20' gaming, '30' movies). */
  videoCategoryId?: string;
  pageToken?: string;
  /** 1–50, default 50. */
  maxResults?: number;
}

export interface SearchParams {
  q: string;
  regionCode?: string;
  pageToken?: string;
  /** 1–50, default 50. */
  maxResults?: number;
}

export interface YouTubeClient {
  readonly baseUrl: string;
  /** `videos.list?chart=mostPopular` with snippet, contentDetails and statistics: one page. */
  videosListChart: ApiCall<ChartParams, VideoListResponse>;
  /** `videos.list?id=…` for up to 50 ids. Unknown ids are simply absent from `items`. */
  videosListByIds: ApiCall<readonly string[], VideoListResponse>;
  /** `videos:batchGetStats` for up to 50 ids (youtube-2026 only; its own bucket). */
  videosBatchGetStats: ApiCall<readonly string[], BatchGetStatsResponse>;
  videoCategoriesList: ApiCall<{ regionCode: string }, VideoCategoryListResponse>;
  channelsList: ApiCall<{ ids: readonly string[] }, ChannelListResponse>;
  searchList: ApiCall<SearchParams, SearchListResponse>;
  /** The API method a client method calls, e.g. `apiMethodOf('searchList') === 'search.list'`. */
  apiMethodOf(name: YouTubeMethodName): ApiMethod;
  /** Closes the pool: waits for requests in flight, then frees the sockets. */
  close(): Promise<void>;
}

const VIDEO_PARTS = 'snippet,contentDetails,statistics';
const MAX_IDS = 50;

function invalid(method: string, field: string, problem: string): UpstreamError {
  return new UpstreamError('QG_INVALID_ARGUMENT', `${method}: ${field}: ${problem}`, {
    reached: 'never',
    field,
    method,
  });
}

function checkIds(method: string, field: string, ids: readonly string[]): string {
  if (!Array.isArray(ids) || ids.length === 0) throw invalid(method, field, 'must list at least one id');
  if (ids.length > MAX_IDS)
    throw invalid(method, field, `at most ${MAX_IDS} ids per call, got ${ids.length}`);
  for (const id of ids) {
    if (typeof id !== 'string' || !/^[A-Za-z0-9_-]+$/.test(id)) {
      throw invalid(method, field, 'ids are letters, digits, - and _');
    }
  }
  return ids.join(',');
}

function checkMaxResults(method: string, value: number | undefined): number {
  const n = value ?? 50;
  if (!Number.isInteger(n) || n < 1 || n > 50) throw invalid(method, 'maxResults', 'must be an integer 1–50');
  return n;
}

function checkRegion(method: string, value: string): string {
  if (typeof value !== 'string' || !/^[A-Za-z]{2}$/.test(value)) {
    throw invalid(method, 'regionCode', 'must be a two-letter ISO 3166-1 code');
  }
  return value.toUpperCase();
}

export function createYouTubeClient(options: YouTubeClientOptions): YouTubeClient {
  const settings = clientSettings(options);
  const transport = openTransport(settings, options.logger);
  const call: Call = (method, path, query, schema, callOptions) =>
    request(transport, method, path, query, schema, callOptions);
  return {
    baseUrl: settings.baseUrl,
    ...apiCalls(call),
    apiMethodOf: (name) => YOUTUBE_API_METHODS[name],
    close: () => transport.pool.close(),
  };
}

/** The options checked, with their defaults: a bad one is a typed error before any socket opens. */
interface ClientSettings {
  apiKey: string;
  /** The base URL's origin, where the pool connects. */
  origin: string;
  /** The base URL's path without a trailing slash, put before each method's path. */
  basePath: string;
  baseUrl: string;
  timeouts: UpstreamTimeouts;
  connections: number;
  keepAliveMs: number;
  maxResponseBytes: number;
}

function clientSettings(options: YouTubeClientOptions): ClientSettings {
  const apiKey = options.apiKey;
  if (typeof apiKey !== 'string' || apiKey.trim() === '') {
    throw new QuotaGuardError('QG_MISSING_API_KEY', 'apiKey: the upstream API key is missing or empty', {
      field: 'apiKey',
    });
  }
  const rawBase = options.baseUrl ?? DEFAULT_BASE_URL;
  let base: URL;
  try {
    base = new URL(rawBase);
  } catch {
    throw new QuotaGuardError('QG_INVALID_ARGUMENT', `baseUrl: not a URL: ${redactText(rawBase, apiKey)}`, {
      field: 'baseUrl',
    });
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw new QuotaGuardError('QG_INVALID_ARGUMENT', 'baseUrl: must be an http(s) URL', { field: 'baseUrl' });
  }
  if (base.search || base.username || base.password) {
    throw new QuotaGuardError('QG_INVALID_ARGUMENT', 'baseUrl: must not carry a query or credentials', {
      field: 'baseUrl',
    });
  }
  const basePath = base.pathname.replace(/\/+$/, '');
  return {
    apiKey,
    origin: base.origin,
    basePath,
    baseUrl: `${base.origin}${basePath}`,
    timeouts: {
      connectMs: positiveIntOption(
        'timeouts.connectMs',
        options.timeouts?.connectMs,
        DEFAULT_TIMEOUTS.connectMs,
      ),
      headersMs: positiveIntOption(
        'timeouts.headersMs',
        options.timeouts?.headersMs,
        DEFAULT_TIMEOUTS.headersMs,
      ),
      bodyMs: positiveIntOption('timeouts.bodyMs', options.timeouts?.bodyMs, DEFAULT_TIMEOUTS.bodyMs),
      totalMs: positiveIntOption('timeouts.totalMs', options.timeouts?.totalMs, DEFAULT_TIMEOUTS.totalMs),
    },
    connections: positiveIntOption('connections', options.connections, 8),
    keepAliveMs: positiveIntOption('keepAliveMs', options.keepAliveMs, 30_000),
    maxResponseBytes: positiveIntOption(
      'maxResponseBytes',
      options.maxResponseBytes,
      DEFAULT_UPSTREAM_MAX_RESPONSE_BYTES,
    ),
  };
}

/** The pool and what a request needs besides it. */
interface Transport {
  settings: ClientSettings;
  pool: Pool;
  /** Errors that came out of connection establishment: the request was provably never written. */
  connectFailures: WeakSet<object>;
  log: UpstreamLogger | undefined;
}

function openTransport(settings: ClientSettings, log: UpstreamLogger | undefined): Transport {
  const { timeouts, keepAliveMs } = settings;
  const { connect, failures: connectFailures } = rememberConnectFailures(
    buildConnector({ timeout: timeouts.connectMs }),
  );

  const pool = new Pool(settings.origin, {
    connections: settings.connections,
    connect,
    headersTimeout: timeouts.headersMs,
    bodyTimeout: timeouts.bodyMs,
    keepAliveTimeout: keepAliveMs,
    keepAliveMaxTimeout: Math.max(keepAliveMs, 600_000),
    pipelining: 1,
  });
  return { settings, pool, connectFailures, log };
}

type Call = <S extends z.ZodType>(
  method: ApiMethod,
  path: string,
  query: Record<string, string | undefined>,
  schema: S,
  callOptions: CallOptions | undefined,
) => Promise<z.output<S>>;

/** One GET: a transport failure or a non-2xx answer is a typed error, a 2xx body is checked against `schema`. */
async function request<S extends z.ZodType>(
  t: Transport,
  method: ApiMethod,
  path: string,
  query: Record<string, string | undefined>,
  schema: S,
  callOptions: CallOptions | undefined,
): Promise<z.output<S>> {
  const { apiKey, origin, basePath } = t.settings;
  const log = t.log;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, v);
  params.set('key', apiKey);
  const fullPath = `${basePath}${path}?${params.toString()}`;
  const ctx: CallContext = { method, url: redactKeyParam(`${origin}${fullPath}`), secret: apiKey };
  const started = performance.now();
  let answer: BoundedAnswer;
  try {
    answer = await boundedGet({
      pool: t.pool,
      path: fullPath,
      headers: { accept: 'application/json', 'user-agent': 'quota-guard' },
      totalMs: t.settings.timeouts.totalMs,
      maxBytes: t.settings.maxResponseBytes,
      ctx,
      connectFailures: t.connectFailures,
      ...(callOptions?.signal !== undefined ? { signal: callOptions.signal } : {}),
    });
  } catch (e) {
    const err = e as UpstreamError;
    log?.warn(
      { method, url: ctx.url, code: err.code, reached: err.reached, ms: elapsed(started) },
      err.message,
    );
    throw err;
  }
  const { status, headers, text } = answer;

  log?.debug?.({ method, url: ctx.url, status, ms: elapsed(started) }, 'upstream request');
  if (status < 200 || status >= 300) {
    const err = errorFromResponse(status, headers, text, ctx);
    const line = { method, url: ctx.url, code: err.code, reached: err.reached, status, reason: err.reason };
    // A used-up quota blocks the bucket: the guard's one `bucket blocked` line says it, once for
    // every request in flight that met it, so each answer is a debug line here.
    if (err.code === 'QG_UPSTREAM_QUOTA_EXCEEDED') log?.debug?.(line, err.message);
    else log?.warn(line, err.message);
    throw err;
  }
  return parseBody(ctx, status, text, schema, log);
}

function parseBody<S extends z.ZodType>(
  ctx: CallContext,
  status: number,
  text: string,
  schema: S,
  log: UpstreamLogger | undefined,
): z.output<S> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw badResponse(ctx, status, 'body is not JSON');
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.join('.') || '(root)'}: ${redactText(i.message, ctx.secret)}`);
    const err = badResponse(ctx, status, issues[0] ?? 'wrong shape', issues);
    log?.warn({ method: ctx.method, url: ctx.url, code: err.code, issues }, err.message);
    throw err;
  }
  return parsed.data;
}

function tagged<P, R>(name: YouTubeMethodName, fn: (params: P, options?: CallOptions) => Promise<R>) {
  return Object.assign(fn, { apiMethod: YOUTUBE_API_METHODS[name] }) as ApiCall<P, R>;
}

/** Each API method's parameters checked and turned into its query, then one `call`. */
function apiCalls(call: Call): Pick<YouTubeClient, YouTubeMethodName> {
  return {
    videosListChart: tagged('videosListChart', async (p: ChartParams, o) => {
      const m = YOUTUBE_API_METHODS.videosListChart;
      const query = {
        part: VIDEO_PARTS,
        chart: 'mostPopular',
        regionCode: checkRegion(m, p.regionCode),
        videoCategoryId: p.videoCategoryId,
        maxResults: String(checkMaxResults(m, p.maxResults)),
        pageToken: p.pageToken,
      };
      return call(m, '/videos', query, VideoListResponseSchema, o);
    }),
    videosListByIds: tagged('videosListByIds', async (ids: readonly string[], o) => {
      const m = YOUTUBE_API_METHODS.videosListByIds;
      const query = { part: VIDEO_PARTS, id: checkIds(m, 'ids', ids), maxResults: String(MAX_IDS) };
      return call(m, '/videos', query, VideoListResponseSchema, o);
    }),
    videosBatchGetStats: tagged('videosBatchGetStats', async (ids: readonly string[], o) => {
      const m = YOUTUBE_API_METHODS.videosBatchGetStats;
      const query = { id: checkIds(m, 'ids', ids), part: 'statistics,contentDetails,snippet' };
      return call(m, '/videos:batchGetStats', query, BatchGetStatsResponseSchema, o);
    }),
    videoCategoriesList: tagged('videoCategoriesList', async (p: { regionCode: string }, o) => {
      const m = YOUTUBE_API_METHODS.videoCategoriesList;
      const query = { part: 'snippet', regionCode: checkRegion(m, p.regionCode) };
      return call(m, '/videoCategories', query, VideoCategoryListResponseSchema, o);
    }),
    channelsList: tagged('channelsList', async (p: { ids: readonly string[] }, o) => {
      const m = YOUTUBE_API_METHODS.channelsList;
      const query = {
        part: 'snippet,statistics',
        id: checkIds(m, 'ids', p.ids),
        maxResults: String(MAX_IDS),
      };
      return call(m, '/channels', query, ChannelListResponseSchema, o);
    }),
    searchList: tagged('searchList', async (p: SearchParams, o) => {
      const m = YOUTUBE_API_METHODS.searchList;
      if (typeof p.q !== 'string' || p.q.trim() === '') throw invalid(m, 'q', 'must be a non-empty query');
      const query = {
        part: 'snippet',
        type: 'video',
        q: p.q,
        regionCode: p.regionCode === undefined ? undefined : checkRegion(m, p.regionCode),
        maxResults: String(checkMaxResults(m, p.maxResults)),
        pageToken: p.pageToken,
      };
      return call(m, '/search', query, SearchListResponseSchema, o);
    }),
  };
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10;
}
