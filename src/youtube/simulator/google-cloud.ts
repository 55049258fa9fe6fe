/**
 * The simulator's Google Cloud side: what `quota-guard reconcile` reads, built from the simulator's
 * own charge log (usage-minutes.ts) with Cloud Monitoring's delay.
 *
 *   POST /token                                     OAuth 2 token endpoint (a JWT-bearer grant)
 *   GET  /computeMetadata/v1/instance/…             a metadata server (Metadata-Flavor: Google):
 *        …/service-accounts/default/token           a token for Application Default Credentials
 *   GET  /v3/projects/{project}/timeSeries          Cloud Monitoring `timeSeries.list`
 *   GET  /v1/projects/{project}/locations/global/services/{service}/quotaInfos   Cloud Quotas
 *   GET|POST|DELETE /_sim/monitoring[/faults|/token] its control: faults, a token, its state
 *
 * Shapes, as test/fixtures/monitoring/ records them: `timeSeries.list` answers `timeSeries[]`,
 * each with `metric.type` and `metric.labels` (`quota_metric`, `limit_name`, `method`), the
 * monitored resource `consumer_quota` (`project_id`, `service`, `location`), `metricKind` DELTA,
 * `valueType` INT64 and `points[]` newest first, each one minute with `value.int64Value` as a
 * JSON string; `pageSize` counts points; `nextPageToken` while there are more. Cloud Quotas
 * answers `quotaInfos[]` with the limit in `dimensionsInfos[].details.value` (an int64 string).
 * Errors are Google Cloud's envelope `{ error: { code, message, status } }`.
 *
 * A minute's point shows once the minute has ended and `delayMs` more have passed (default four
 * minutes, scaled with a compressed day). Faults: 401/403/404 answers, a slow answer, a body cut
 * off halfway, small pages.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as z from 'zod';
import { InvalidArgumentError } from '../../errors.js';
import type { QuotaProfile } from '../../profiles/profiles.js';
import { readJson, readText } from './body.js';
import type { UsageMinutes } from './usage-minutes.js';

export const NET_USAGE = 'serviceruntime.googleapis.com/quota/rate/net_usage';
/** The metadata server's path prefix (gcp-metadata's, under GCE_METADATA_HOST). */
const METADATA = '/computeMetadata/v1';
/** Minutes between a minute's end and its point showing, by default. */
const DEFAULT_DELAY_MINUTES = 4;
const MAX_PAGE = 100_000;

const CloudFaultsSchema = z.strictObject({
  /** Every read answers 401 UNAUTHENTICATED. */
  unauthenticated: z.boolean().optional(),
  /** Every read answers 403 PERMISSION_DENIED (the role is missing). */
  forbidden: z.boolean().optional(),
  /** Every read answers 404 NOT_FOUND (no such project). */
  notFound: z.boolean().optional(),
  /** Every read waits this long before answering, in ms. */
  latencyMs: z.number().int().min(0).max(600_000).optional(),
  /** Every read's body stops halfway and the connection closes. */
  truncate: z.boolean().optional(),
  /** At most this many points (quota infos) a page: the answers carry page tokens. */
  pageSize: z.number().int().min(1).max(MAX_PAGE).nullable().optional(),
});
export type CloudFaultOptions = z.infer<typeof CloudFaultsSchema>;

export interface CloudFaultState {
  unauthenticated: boolean;
  forbidden: boolean;
  notFound: boolean;
  latencyMs: number;
  truncate: boolean;
  pageSize: number | null;
}

export interface GoogleCloudControl {
  /** How long the Monitoring minute is, in ms (60,000, or a 1,440th of a compressed day). */
  readonly minuteMs: number;
  /** How long after a minute ends its point shows, in ms. */
  readonly delayMs: number;
  /** A bearer token the Monitoring and Quotas routes accept. */
  token(): string;
  setFaults(options: CloudFaultOptions): CloudFaultState;
  clearFaults(): CloudFaultState;
  faults(): CloudFaultState;
  /** Monitoring and Quotas pages served so far. */
  readonly reads: number;
}

/** What the routes read from the rest of the simulator. */
export interface CloudWorld {
  profile: QuotaProfile;
  quotas: Readonly<Record<string, number>>;
  usage: UsageMinutes;
  now(): number;
  projects(): string[];
  projectNumber(project: string): string;
}

interface CloudError {
  status: number;
  rpc: string;
  message: string;
}

/** A read's answer: its body, or the error to send. */
type Answer = { body: object } | { error: CloudError };

interface Page {
  offset: number;
  size: number;
  token(offset: number): string;
}

const noFaults = (): CloudFaultState => ({
  unauthenticated: false,
  forbidden: false,
  notFound: false,
  latencyMs: 0,
  truncate: false,
  pageSize: null,
});

function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

/** `metric.type = "x" AND resource.labels.service = "y"` → its terms; undefined when not of that form. */
export function parseFilter(filter: string): Map<string, string> | undefined {
  const terms = new Map<string, string>();
  for (const part of filter.split(/\s+AND\s+/)) {
    const m = /^\s*([a-z_.]+)\s*=\s*"([^"]*)"\s*$/.exec(part);
    if (!m) return undefined;
    terms.set(
      m[1]!.replace(/^resource\.label\./, 'resource.labels.').replace(/^metric\.label\./, 'metric.labels.'),
      m[2]!,
    );
  }
  return terms;
}

/** The upstream's names of one bucket's daily quota, as the simulator reports them. */
export function quotaNamesOf(profile: QuotaProfile, bucket: string) {
  const names = profile.upstreamNames[bucket];
  const service = serviceOfProfile(profile);
  const slug = bucket.replace(/[^A-Za-z0-9]+/g, '_');
  const pascal = bucket.replace(/(^|[^A-Za-z0-9]+)([A-Za-z0-9])/g, (_m, _s, c: string) => c.toUpperCase());
  return {
    metric: names?.metric ?? `${service}/${slug}`,
    limit: names?.limit ?? `default${pascal}PerDayPerProject`,
    displayName: names?.displayName ?? bucket,
    service,
  };
}

/** The service of a profile's quota metrics: the default bucket's metric's prefix. */
function serviceOfProfile(profile: QuotaProfile): string {
  const metric = profile.upstreamNames[profile.defaultBucket]?.metric;
  return metric?.includes('/') ? metric.slice(0, metric.indexOf('/')) : 'youtube.googleapis.com';
}

export class GoogleCloud implements GoogleCloudControl {
  readonly minuteMs: number;
  readonly delayMs: number;
  readonly #w: CloudWorld;
  readonly #tokens = new Set<string>();
  readonly #timers = new Set<NodeJS.Timeout>();
  #faults = noFaults();
  #reads = 0;

  constructor(world: CloudWorld, delayMs?: number) {
    this.#w = world;
    this.minuteMs = world.usage.minuteMs;
    this.delayMs = delayMs ?? DEFAULT_DELAY_MINUTES * this.minuteMs;
  }

  get reads(): number {
    return this.#reads;
  }

  token(): string {
    const t = `ya29.sim-${randomBytes(18).toString('base64url')}`;
    this.#tokens.add(t);
    return t;
  }

  setFaults(options: CloudFaultOptions): CloudFaultState {
    const r = CloudFaultsSchema.safeParse(options);
    if (!r.success) {
      const i = r.error.issues[0];
      throw new InvalidArgumentError(`monitoring.${i?.path.join('.') ?? ''}`, i?.message ?? 'invalid');
    }
    for (const [k, v] of Object.entries(r.data)) if (v !== undefined) Object.assign(this.#faults, { [k]: v });
    return this.faults();
  }

  clearFaults(): CloudFaultState {
    this.#faults = noFaults();
    return this.faults();
  }

  faults(): CloudFaultState {
    return { ...this.#faults };
  }

  /** Whether a path is one of these routes. */
  handles(path: string): boolean {
    return (
      path === '/token' ||
      path.startsWith(`${METADATA}/`) ||
      path.startsWith('/v3/projects/') ||
      path.startsWith('/v1/projects/') ||
      path === '/_sim/monitoring' ||
      path.startsWith('/_sim/monitoring/')
    );
  }

  handle(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): void {
    if (path === '/token') this.#oauth(req, res);
    else if (path.startsWith(`${METADATA}/`)) this.#metadata(req, res, path.slice(METADATA.length));
    else if (path.startsWith('/_sim/monitoring'))
      void this.#control(req, res, path.slice('/_sim/monitoring'.length));
    else this.#read(req, res, path, query);
  }

  /** A Monitoring or Quotas read: admitted (token, faults, project), then answered. */
  #read(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): void {
    const refused = this.#admit(req, path);
    if (refused) {
      this.#send(res, refused.status, errorBody(refused));
      return;
    }
    this.#reads++;
    const monitoring = /^\/v3\/projects\/([^/]+)\/timeSeries$/.exec(path);
    const quotas = /^\/v1\/projects\/([^/]+)\/locations\/global\/services\/([^/]+)\/quotaInfos$/.exec(path);
    const answer: Answer = monitoring
      ? this.#timeSeries(decodeURIComponent(monitoring[1]!), query)
      : quotas
        ? this.#quotaInfos(decodeURIComponent(quotas[1]!), decodeURIComponent(quotas[2]!), query)
        : { error: { status: 404, rpc: 'NOT_FOUND', message: `no route ${path}` } };
    if ('error' in answer) this.#send(res, answer.error.status, errorBody(answer.error));
    else this.#send(res, 200, JSON.stringify(answer.body));
  }

  /** Drops the answers a latency fault still holds. */
  close(): void {
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
  }

  /** A read's token, the faults, and the project: the error to answer, or undefined to go on. */
  #admit(req: IncomingMessage, path: string): CloudError | undefined {
    const auth = req.headers.authorization ?? '';
    const token = /^Bearer (\S+)$/.exec(auth)?.[1];
    if (req.method !== 'GET') return { status: 405, rpc: 'INVALID_ARGUMENT', message: 'only GET is served' };
    if (this.#faults.unauthenticated || token === undefined || !this.#tokens.has(token)) {
      return {
        status: 401,
        rpc: 'UNAUTHENTICATED',
        message: 'The request does not carry a valid OAuth 2 access token.',
      };
    }
    const project = decodeURIComponent(/^\/v[13]\/projects\/([^/]+)\//.exec(path)?.[1] ?? '');
    const known = this.#w.projects();
    const byNumber = known.find((p) => this.#w.projectNumber(p) === project);
    if (this.#faults.forbidden) {
      const what = path.startsWith('/v3/') ? 'monitoring.timeSeries.list' : 'cloudquotas.quotas.get';
      return {
        status: 403,
        rpc: 'PERMISSION_DENIED',
        message: `Permission ${what} denied (or the resource may not exist).`,
      };
    }
    if (this.#faults.notFound || (!known.includes(project) && byNumber === undefined)) {
      return { status: 404, rpc: 'NOT_FOUND', message: `Project '${project}' not found.` };
    }
    return undefined;
  }

  #timeSeries(projectRef: string, query: URLSearchParams): Answer {
    const project = this.#projectId(projectRef);
    const bad = (message: string): Answer => ({ error: { status: 400, rpc: 'INVALID_ARGUMENT', message } });
    const terms = parseFilter(query.get('filter') ?? '');
    if (!terms?.has('metric.type'))
      return bad('Field filter had an invalid value: it must name metric.type.');
    const endAt = Date.parse(query.get('interval.endTime') ?? '');
    const startText = query.get('interval.startTime');
    const startAt = startText === null ? endAt : Date.parse(startText);
    if (!Number.isFinite(endAt) || !Number.isFinite(startAt) || startAt > endAt) {
      return bad(
        'Field interval had an invalid value: interval.endTime is required, and not before startTime.',
      );
    }
    const service = terms.get('resource.labels.service');
    const quotaMetric = terms.get('metric.labels.quota_metric');
    const type = terms.get('resource.type');
    const visibleUntil = this.#w.now() - this.delayMs;
    const series: Array<{ head: object; points: object[] }> = [];
    if (terms.get('metric.type') === NET_USAGE && (type === undefined || type === 'consumer_quota')) {
      for (const s of this.#w.usage.of(project)) {
        const names = quotaNamesOf(this.#w.profile, s.bucket);
        if (service !== undefined && service !== names.service) continue;
        if (quotaMetric !== undefined && quotaMetric !== names.metric) continue;
        const points = [...s.minutes]
          .map(([start, units]) => ({ start, end: start + this.minuteMs, units }))
          .filter((p) => p.end > startAt && p.end <= endAt && p.end <= visibleUntil)
          .sort((a, b) => b.start - a.start)
          .map((p) => ({
            interval: { startTime: rfc3339(p.start), endTime: rfc3339(p.end) },
            value: { int64Value: String(p.units) },
          }));
        if (points.length === 0) continue;
        series.push({
          head: {
            metric: {
              labels: { quota_metric: names.metric, limit_name: names.limit, method: s.method },
              type: NET_USAGE,
            },
            resource: {
              type: 'consumer_quota',
              labels: { location: 'global', project_id: project, service: names.service },
            },
            metricKind: 'DELTA',
            valueType: 'INT64',
          },
          points,
        });
      }
    }
    const page = this.#page(query, `${query.get('filter')}|${endAt}|${startAt}`);
    if ('error' in page) return page;
    // Points are counted across series: a series may continue on the next page.
    const out: object[] = [];
    let index = 0;
    for (const s of series) {
      const from = Math.max(0, page.offset - index);
      const to = Math.min(s.points.length, page.offset + page.size - index);
      if (from < to) out.push({ ...s.head, points: s.points.slice(from, to) });
      index += s.points.length;
    }
    const next = page.offset + page.size < index ? page.token(page.offset + page.size) : undefined;
    return { body: { timeSeries: out, unit: '1', ...(next !== undefined ? { nextPageToken: next } : {}) } };
  }

  #quotaInfos(projectRef: string, service: string, query: URLSearchParams): Answer {
    const project = this.#projectId(projectRef);
    const number = this.#w.projectNumber(project);
    const infos = Object.entries(this.#w.quotas)
      .map(([bucket, value]) => ({ bucket, value, names: quotaNamesOf(this.#w.profile, bucket) }))
      .filter((q) => q.names.service === service)
      .map(({ value, names }) => ({
        name: `projects/${number}/locations/global/services/${service}/quotaInfos/${names.limit}`,
        quotaId: names.limit,
        metric: names.metric,
        service,
        isPrecise: true,
        refreshInterval: 'day',
        containerType: 'PROJECT',
        dimensions: [],
        metricDisplayName: names.displayName,
        quotaDisplayName: `${names.displayName} per day`,
        metricUnit: '1/d/{project}',
        quotaIncreaseEligibility: { isEligible: true },
        isFixed: false,
        dimensionsInfos: [
          { dimensions: {}, details: { value: String(value) }, applicableLocations: ['global'] },
        ],
        isConcurrent: false,
      }));
    const page = this.#page(query, `quotaInfos|${project}|${service}`);
    if ('error' in page) return page;
    const end = page.offset + page.size;
    return {
      body: {
        quotaInfos: infos.slice(page.offset, end),
        ...(end < infos.length ? { nextPageToken: page.token(end) } : {}),
      },
    };
  }

  /** The page asked for: its offset (from `pageToken`, tied to the query) and size. */
  #page(query: URLSearchParams, of: string): Page | { error: CloudError } {
    const asked = Number(query.get('pageSize') ?? MAX_PAGE);
    const size = Math.min(
      Number.isInteger(asked) && asked > 0 ? asked : MAX_PAGE,
      this.#faults.pageSize ?? MAX_PAGE,
      MAX_PAGE,
    );
    const token = (offset: number) => Buffer.from(JSON.stringify({ o: offset, q: of })).toString('base64url');
    const given = query.get('pageToken');
    if (given === null || given === '') return { offset: 0, size, token };
    try {
      const t = JSON.parse(Buffer.from(given, 'base64url').toString('utf8')) as { o?: unknown; q?: unknown };
      if (t.q === of && typeof t.o === 'number' && Number.isInteger(t.o) && t.o >= 0)
        return { offset: t.o, size, token };
    } catch {
      // answered below
    }
    return {
      error: { status: 400, rpc: 'INVALID_ARGUMENT', message: 'Field pageToken had an invalid value.' },
    };
  }

  #projectId(ref: string): string {
    return this.#w.projects().find((p) => p === ref || this.#w.projectNumber(p) === ref) ?? ref;
  }

  #oauth(req: IncomingMessage, res: ServerResponse): void {
    readText(req).then(
      (text) => {
        const form = new URLSearchParams(text);
        if (
          req.method !== 'POST' ||
          !form.get('grant_type') ||
          !(form.get('assertion') || form.get('refresh_token'))
        ) {
          return this.#send(
            res,
            400,
            JSON.stringify({
              error: 'invalid_grant',
              error_description: 'a grant_type and its assertion are required',
            }),
          );
        }
        this.#send(res, 200, JSON.stringify(this.#tokenBody()), {}, false);
      },
      () => res.destroy(),
    );
  }

  #tokenBody() {
    return { access_token: this.token(), expires_in: 3599, token_type: 'Bearer' };
  }

  #metadata(req: IncomingMessage, res: ServerResponse, path: string): void {
    const [status, body] = this.#metadataAnswer(req, path);
    const type = body.startsWith('{') ? 'application/json' : 'application/text';
    this.#send(res, status, body, { 'metadata-flavor': 'Google', 'content-type': type }, false);
  }

  #metadataAnswer(req: IncomingMessage, path: string): [number, string] {
    if (req.headers['metadata-flavor'] !== 'Google') return [403, 'Missing Metadata-Flavor: Google header.'];
    const project = this.#w.projects()[0] ?? 'default';
    switch (path.split('?')[0]!.replace(/\/+$/, '')) {
      case '/instance':
        return [200, 'attributes/\nhostname\nid\nservice-accounts/\nzone\n'];
      case '/instance/service-accounts/default/token':
        return [200, JSON.stringify(this.#tokenBody())];
      case '/instance/service-accounts/default/email':
        return [200, `quota-guard@${project}.iam.gserviceaccount.com`];
      case '/project/project-id':
        return [200, project];
      case '/project/numeric-project-id':
        return [200, this.#w.projectNumber(project)];
      default:
        return [404, 'Not found.'];
    }
  }

  async #control(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const route = `${req.method ?? 'GET'} ${path.replace(/\/+$/, '') || '/'}`;
    let status = 200;
    let value: unknown;
    try {
      if (route === 'POST /token') value = this.#tokenBody();
      else if (route === 'POST /faults') {
        this.setFaults((await readJson(req)) as CloudFaultOptions);
      } else if (route === 'DELETE /faults') this.clearFaults();
      else if (route !== 'GET /') {
        status = 404;
        value = { error: { code: 'QG_INVALID_ARGUMENT', message: `no control route ${route}` } };
      }
      value ??= { minuteMs: this.minuteMs, delayMs: this.delayMs, reads: this.#reads, faults: this.faults() };
    } catch (e) {
      status = 400;
      value = { error: { code: 'QG_INVALID_ARGUMENT', message: e instanceof Error ? e.message : String(e) } };
    }
    this.#send(res, status, JSON.stringify(value), {}, false);
  }

  /** An answer: after the latency fault, and cut off halfway under the truncate fault (reads only). */
  #send(
    res: ServerResponse,
    status: number,
    body: string,
    headers: Record<string, string> = {},
    faulty = true,
  ): void {
    const buf = Buffer.from(body);
    const write = () => {
      if (res.destroyed || res.headersSent) return;
      res.writeHead(status, {
        'content-type': 'application/json; charset=UTF-8',
        'content-length': String(buf.length),
        ...headers,
      });
      if (faulty && this.#faults.truncate) {
        res.write(buf.subarray(0, Math.floor(buf.length / 2)), () => res.socket?.destroy());
      } else res.end(buf);
    };
    const wait = faulty ? this.#faults.latencyMs : 0;
    if (wait <= 0) {
      write();
      return;
    }
    const t = setTimeout(() => {
      this.#timers.delete(t);
      write();
    }, wait);
    this.#timers.add(t);
  }
}

function errorBody(e: CloudError): string {
  return JSON.stringify({ error: { code: e.status, message: e.message, status: e.rpc } });
}
