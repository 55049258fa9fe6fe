/**
 * The upstream's count from Google Cloud Monitoring: `projects.timeSeries.list` on the quota usage
 * metric (`serviceruntime.googleapis.com/quota/rate/net_usage` by default) of one Google Cloud
 * project, for one service, summed per quota metric (`metric.labels.quota_metric`) and minute.
 *
 * The answer's shape (test/fixtures/monitoring/ cites where each part was recorded): `timeSeries[]`,
 * each with `metric.labels` (`quota_metric`, `limit_name`, `method`), the monitored resource
 * `consumer_quota` (`resource.labels.service`, `project_id`, `location`), `metricKind` DELTA,
 * `valueType` INT64 and `points[]` newest first, each a one-minute `interval` with the units as
 * `value.int64Value` (a JSON string); `nextPageToken` while there is more; `executionErrors[]` and
 * `unreachable[]` when the data may be incomplete. A point counts in the minute its interval ends
 * in. An answer that is partial, malformed, truncated or late is refused whole: the reconcile
 * records nothing from it.
 *
 * Reads go over undici with the YouTube client's deadline, size cap and error classification
 * (src/outcome/transport.ts); the bearer token comes from an `AccessTokenSource` (google-auth.ts).
 */
import { buildConnector, Pool } from 'undici';
import * as z from 'zod/mini';
import { positiveIntOption } from '../argument-checks.js';
import {
  DEFAULT_COUNT_DEADLINE_MS,
  DEFAULT_COUNT_MAX_RESPONSE_BYTES,
  DEFAULT_MONITORING_URL,
} from '../config/defaults.js';
import { QuotaGuardError } from '../errors.js';
import type { Logger } from '../logger.js';
import { UpstreamError } from '../outcome/errors.js';
import { googleErrorFromResponse, readGoogleError } from '../outcome/google.js';
import { boundedGet, rememberConnectFailures, type TransportContext } from '../outcome/transport.js';
import '../zod-mini.js';
import type { AccessTokenSource } from './google-auth.js';
import { type CountAnswer, type CountQuery, minutesOf, type UpstreamCountSource } from './source.js';

/** The metric Google's own quota pages sum over the day for a rate quota's usage. */
export const NET_USAGE_METRIC = 'serviceruntime.googleapis.com/quota/rate/net_usage';
/** The most pages one count reads: a day of minutes for every method fits in far fewer. */
export const MAX_COUNT_PAGES = 50;

export interface CloudMonitoringOptions {
  tokens: AccessTokenSource;
  /** Default https://monitoring.googleapis.com (the simulator's origin in tests). */
  baseUrl?: string;
  /** Default `serviceruntime.googleapis.com/quota/rate/net_usage`. */
  metricType?: string;
  /** One read, connect to last byte (default 30 s). */
  deadlineMs?: number;
  /** The largest answer read (default 16 MiB). */
  maxResponseBytes?: number;
  /** What an error names for the two settings above. */
  settings?: TransportContext['settings'];
  logger?: Logger;
}

const int64 = z.string().check(z.regex(/^-?\d{1,17}$/, 'must be an int64 as a string'));

const PointSchema = z.object({
  interval: z.object({ startTime: z.optional(z.string()), endTime: z.string() }),
  value: z.object({ int64Value: int64 }),
});

const SeriesSchema = z.object({
  metric: z.object({ type: z.string(), labels: z.optional(z.record(z.string(), z.string())) }),
  resource: z.optional(z.object({ type: z.string(), labels: z.optional(z.record(z.string(), z.string())) })),
  metricKind: z.optional(z.string()),
  valueType: z.optional(z.string()),
  points: z._default(z.array(PointSchema), []),
});

export const ListTimeSeriesSchema = z.object({
  timeSeries: z._default(z.array(SeriesSchema), []),
  nextPageToken: z.optional(z.string()),
  executionErrors: z.optional(z.array(z.unknown())),
  unreachable: z.optional(z.array(z.string())),
});

export type ListTimeSeries = z.infer<typeof ListTimeSeriesSchema>;

/** The service a quota metric belongs to: `youtube.googleapis.com/default` → `youtube.googleapis.com`. */
export function serviceOf(metric: string): string {
  const slash = metric.indexOf('/');
  return slash < 0 ? metric : metric.slice(0, slash);
}

export function cloudMonitoringSource(options: CloudMonitoringOptions): UpstreamCountSource {
  const base = new URL(options.baseUrl ?? DEFAULT_MONITORING_URL);
  const basePath = base.pathname.replace(/\/+$/, '');
  const metricType = options.metricType ?? NET_USAGE_METRIC;
  const deadlineMs = positiveIntOption('deadlineMs', options.deadlineMs, DEFAULT_COUNT_DEADLINE_MS);
  const maxBytes = positiveIntOption(
    'maxResponseBytes',
    options.maxResponseBytes,
    DEFAULT_COUNT_MAX_RESPONSE_BYTES,
  );
  const { connect, failures } = rememberConnectFailures(
    buildConnector({ timeout: Math.min(deadlineMs, 10_000) }),
  );
  const pool = new Pool(base.origin, { connections: 2, connect, pipelining: 1 });

  async function page(
    project: string,
    query: URLSearchParams,
    signal?: AbortSignal,
  ): Promise<ListTimeSeries> {
    const path = `${basePath}/v3/projects/${encodeURIComponent(project)}/timeSeries?${query}`;
    const token = await options.tokens.token();
    const ctx: TransportContext = {
      method: 'timeSeries.list',
      url: `${base.origin}${path}`,
      secret: token,
      ...(options.settings !== undefined ? { settings: options.settings } : {}),
    };
    const answer = await boundedGet({
      pool,
      path,
      headers: { accept: 'application/json', authorization: `Bearer ${token}`, 'user-agent': 'quota-guard' },
      totalMs: deadlineMs,
      maxBytes,
      ctx,
      connectFailures: failures,
      ...(signal !== undefined ? { signal } : {}),
    });
    if (answer.status < 200 || answer.status >= 300) {
      throw monitoringError(project, answer.status, answer.headers, answer.text, ctx);
    }
    return parseListTimeSeries(answer.text, project);
  }

  return {
    name: 'Cloud Monitoring',
    async count(q: CountQuery): Promise<CountAnswer> {
      const n = minutesOf(q);
      const perMinute: Record<string, number[]> = {};
      for (const { bucket } of q.quotas) perMinute[bucket] = new Array<number>(n).fill(0);
      let reads = 0;
      for (const service of new Set(q.quotas.map((x) => serviceOf(x.metric)))) {
        const bucketOf = new Map(
          q.quotas.filter((x) => serviceOf(x.metric) === service).map((x) => [x.metric, x.bucket]),
        );
        const query = new URLSearchParams({
          filter: `metric.type = "${q.usageMetric ?? metricType}" AND resource.type = "consumer_quota" AND resource.labels.service = "${service}"`,
          'interval.startTime': new Date(q.fromMs).toISOString(),
          'interval.endTime': new Date(q.toMs).toISOString(),
          view: 'FULL',
        });
        const seen = new Set<string>();
        for (;;) {
          const answer = await page(q.project, query, q.signal);
          reads++;
          addPoints(answer, bucketOf, perMinute, q, n);
          const next = answer.nextPageToken;
          if (next === undefined || next === '') break;
          if (seen.has(next) || seen.size + 1 >= MAX_COUNT_PAGES) {
            throw malformed(
              q.project,
              `the answer runs past ${seen.size + 1} pages (page tokens repeat or never end)`,
            );
          }
          seen.add(next);
          query.set('pageToken', next);
        }
      }
      options.logger?.debug?.({ project: q.project, reads }, 'upstream count read');
      return { perMinute, reads };
    },
    close: () => pool.close(),
  };
}

/** A 2xx body checked: the shape above, complete (no execution errors, no unreachable region). */
export function parseListTimeSeries(text: string, project: string): ListTimeSeries {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw malformed(project, 'the body is not JSON (cut short?)');
  }
  const r = ListTimeSeriesSchema.safeParse(json);
  if (!r.success) {
    const i = r.error.issues[0];
    throw malformed(project, `${i?.path.join('.') || '(root)'}: ${i?.message ?? 'wrong shape'}`);
  }
  if ((r.data.executionErrors ?? []).length > 0 || (r.data.unreachable ?? []).length > 0) {
    throw malformed(
      project,
      'a partial answer (execution errors or unreachable regions): counted nothing from it',
    );
  }
  for (const [i, s] of r.data.timeSeries.entries()) {
    if (s.metricKind !== undefined && s.metricKind !== 'DELTA')
      throw malformed(project, `timeSeries.${i}.metricKind: ${s.metricKind}, not DELTA`);
    if (s.valueType !== undefined && s.valueType !== 'INT64')
      throw malformed(project, `timeSeries.${i}.valueType: ${s.valueType}, not INT64`);
    if (s.metric.labels?.['quota_metric'] === undefined)
      throw malformed(project, `timeSeries.${i}.metric.labels.quota_metric: missing`);
  }
  return r.data;
}

/** Each point of a quota asked for, added to the minute its interval ends in. */
function addPoints(
  answer: ListTimeSeries,
  bucketOf: ReadonlyMap<string, string>,
  perMinute: Record<string, number[]>,
  q: CountQuery,
  n: number,
): void {
  for (const s of answer.timeSeries) {
    const bucket = bucketOf.get(s.metric.labels?.['quota_metric'] ?? '');
    if (bucket === undefined) continue;
    const row = perMinute[bucket]!;
    for (const p of s.points) {
      const end = Date.parse(p.interval.endTime);
      if (!Number.isFinite(end))
        throw malformed(q.project, `a point's endTime is not a time: ${p.interval.endTime}`);
      const i = Math.ceil((end - q.fromMs) / q.minuteMs) - 1;
      if (i >= 0 && i < n) row[i] = (row[i] ?? 0) + Number(p.value.int64Value);
    }
  }
}

function malformed(project: string, problem: string): UpstreamError {
  return new UpstreamError('QG_UPSTREAM_BAD_RESPONSE', `${project}: Cloud Monitoring: ${problem}`, {
    reached: 'yes',
    method: 'timeSeries.list',
  });
}

/**
 * A refusal, said for reconcile: 401 the token, 403 the role or the API, 404 (or an invalid
 * project) the project id; anything else as Google's error model says (a 429, a 5xx).
 */
function monitoringError(
  project: string,
  status: number,
  headers: Record<string, string | string[] | undefined>,
  text: string,
  ctx: TransportContext,
): QuotaGuardError {
  const facts = readGoogleError(text);
  const why = `${status}${facts.rpcStatus !== undefined ? ` ${facts.rpcStatus}` : ''}`;
  const said = facts.message !== undefined ? `: ${facts.message.replace(/\s+/g, ' ').slice(0, 300)}` : '';
  const at = `${project}: Cloud Monitoring refused the read (${why})${said}`;
  if (status === 401)
    return new QuotaGuardError('QG_RECONCILE_AUTH', `${at}; the credentials' token was not accepted`);
  if (status === 403) {
    return new QuotaGuardError(
      'QG_RECONCILE_FORBIDDEN',
      `${at}; grant the credentials roles/monitoring.viewer on project ${project}, and enable the Cloud Monitoring API there`,
    );
  }
  if (status === 404 || (status === 400 && /project/i.test(facts.message ?? ''))) {
    return new QuotaGuardError(
      'QG_RECONCILE_PROJECT',
      `${at}; is '${project}' the Google Cloud project id (credentials[].project)?`,
    );
  }
  return googleErrorFromResponse(status, headers, text, {
    method: ctx.method,
    url: ctx.url,
    secret: ctx.secret,
  });
}
