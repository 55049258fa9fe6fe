/**
 * `startSimulator(options)`: a local stand-in for the YouTube Data API v3 on loopback.
 *
 * Same paths (`/youtube/v3/videos`, `/youtube/v3/videos:batchGetStats`, …), same JSON shapes and
 * Google's error envelope. Its own quota per project and bucket, charged with the profile's costs
 * for every request it answers on a method (invalid ones, errors and quotaExceeded answers
 * included; requests with a missing or unknown key excepted), reset at midnight in the profile's
 * time zone or every `dayLengthSec`. Faults on demand. Every request is recorded, so a test can
 * compare what the upstream charged with what a ledger recorded. A control API under `/_sim/`
 * offers the same levers to other processes.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import * as z from 'zod';
import { InvalidArgumentError, QuotaGuardError } from '../../errors.js';
import { closeServer, listen } from '../../http-server.js';
import {
  getProfile,
  type MethodSpec,
  methodSpec,
  PROFILE_IDS,
  type ProfileId,
  type QuotaProfile,
} from '../../profiles/profiles.js';
import { DEFAULT_REGIONS as CONFIG_DEFAULT_REGIONS } from '../defaults.js';
import { buildRoutes, type Route } from './api.js';
import { handleControl } from './control-routes.js';
import { Corpus } from './corpus.js';
import { type ApiError, apiErrors } from './envelope.js';
import { Faults } from './faults.js';
import { GoogleCloud } from './google-cloud.js';
import { type BucketUsage, DayClock, QuotaBook } from './quota.js';
import { Replies } from './replies.js';
import { hash32 } from './rng.js';
import type { RequestLogEntry, SimClock, Simulator, SimulatorOptions, SimulatorStats } from './types.js';
import { UsageMinutes } from './usage-minutes.js';

export const DEFAULT_REGIONS: readonly string[] = CONFIG_DEFAULT_REGIONS;
export const API_PREFIX = '/youtube/v3';
export const CONTROL_PREFIX = '/_sim';
/** Project of every key when the simulator is started without a key list. */
export const ANY_KEY_PROJECT = 'default';

const OptionsSchema = z.object({
  port: z.number().int().min(0).max(65_535).optional(),
  host: z.string().min(1).optional(),
  keys: z.array(z.string()).optional(),
  profile: z
    .union([
      z.enum(PROFILE_IDS as [ProfileId, ...ProfileId[]]),
      z.custom<QuotaProfile>(
        (v) => typeof v === 'object' && v !== null && 'buckets' in v && 'methods' in v,
        'must be a profile',
      ),
    ])
    .optional(),
  legacyErrors: z.boolean().optional(),
  quota: z.number().int().min(0).optional(),
  buckets: z.record(z.string(), z.number().int().min(0)).optional(),
  seed: z.union([z.string().min(1), z.number()]).optional(),
  dayLengthSec: z.number().positive().optional(),
  chartPeriodSec: z.number().min(1).optional(),
  regions: z
    .array(z.string().regex(/^[A-Za-z]{2}$/, 'must be two-letter region codes'))
    .min(1)
    .optional(),
  maxLog: z.number().int().min(1).optional(),
  monitoringDelaySec: z.number().min(0).optional(),
});

function validated(options: SimulatorOptions): z.infer<typeof OptionsSchema> {
  const r = OptionsSchema.safeParse(options);
  if (!r.success) {
    const i = r.error.issues[0];
    throw new InvalidArgumentError(i?.path.join('.') || 'options', i?.message ?? 'invalid');
  }
  return r.data;
}

/** `['K1', 'K2@team']` → key → project. */
export function parseKeys(keys: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  keys.forEach((spec, i) => {
    const at = spec.lastIndexOf('@');
    const key = at < 0 ? spec : spec.slice(0, at);
    const project = at < 0 ? `project-${i + 1}` : spec.slice(at + 1);
    if (!/^[\x21-\x7e]+$/.test(key) || key.includes('@')) {
      throw new InvalidArgumentError(`keys[${i}]`, 'a key is printable ASCII without spaces or @');
    }
    if (!/^[A-Za-z0-9._-]+$/.test(project)) {
      throw new InvalidArgumentError(`keys[${i}]`, 'the project after @ is letters, digits, ., _ and -');
    }
    const known = out.get(key);
    if (known !== undefined && known !== project) {
      throw new InvalidArgumentError(`keys[${i}]`, 'the same key is listed for two projects');
    }
    out.set(key, project);
  });
  return out;
}

function bucketQuotas(profile: QuotaProfile, quota: number | undefined, overrides: Record<string, number>) {
  const quotas: Record<string, number> = {};
  for (const [name, spec] of Object.entries(profile.buckets)) quotas[name] = spec.quota;
  if (quota !== undefined) quotas[profile.defaultBucket] = quota;
  for (const [name, units] of Object.entries(overrides)) {
    if (!(name in quotas)) {
      throw new QuotaGuardError(
        'QG_UNKNOWN_BUCKET',
        `buckets.${name}: no such bucket in ${profile.id} (known: ${Object.keys(quotas).join(', ')})`,
        { field: `buckets.${name}` },
      );
    }
    quotas[name] = units;
  }
  return quotas;
}

/** A clock that follows `source` shifted by an offset the control API can set or advance. */
function offsetClock(source: () => number): SimClock {
  let offset = 0;
  return {
    now: () => source() + offset,
    set: (ms) => {
      offset = ms - source();
    },
    advance: (ms) => {
      offset += ms;
    },
  };
}

/**
 * The requests the simulator answered, newest last: at most `max` kept (the oldest tenth dropped when
 * full), while the totals by status and by method count every request since start.
 */
class RequestLog {
  readonly entries: RequestLogEntry[] = [];
  #seq = 0;
  readonly #byStatus: Record<string, number> = {};
  readonly #byMethod: Record<string, number> = {};

  readonly #max: number;
  readonly #onRequest: ((entry: RequestLogEntry) => void) | undefined;

  constructor(max: number, onRequest?: (entry: RequestLogEntry) => void) {
    this.#max = max;
    this.#onRequest = onRequest;
  }

  record(entry: Omit<RequestLogEntry, 'seq'>): void {
    const e: RequestLogEntry = { seq: ++this.#seq, ...entry };
    this.entries.push(e);
    if (this.entries.length > this.#max) this.entries.splice(0, Math.max(1, Math.ceil(this.#max / 10)));
    this.#byStatus[String(e.status)] = (this.#byStatus[String(e.status)] ?? 0) + 1;
    if (e.method) this.#byMethod[e.method] = (this.#byMethod[e.method] ?? 0) + 1;
    this.#onRequest?.(e);
  }

  counts(): SimulatorStats['requests'] {
    return {
      total: this.#seq,
      kept: this.entries.length,
      byStatus: { ...this.#byStatus },
      byMethod: { ...this.#byMethod },
    };
  }
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const w = buildWorld(options);
  const sim = simulatorHandle(w, () => closeServer(server));

  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    const qi = url.indexOf('?');
    const path = qi < 0 ? url : url.slice(0, qi);
    const query = new URLSearchParams(qi < 0 ? '' : url.slice(qi + 1));
    try {
      if (w.cloud.handles(path)) {
        w.cloud.handle(req, res, path, query);
      } else if (path === CONTROL_PREFIX || path.startsWith(`${CONTROL_PREFIX}/`)) {
        handleControl(sim, req, res, path.slice(CONTROL_PREFIX.length), query);
      } else {
        handleApi(w, req, res, path, query);
      }
    } catch (e) {
      // A bug in the simulator: answer 500 rather than drop the connection, and say so on stderr.
      process.stderr.write(
        `quota-guard simulator: internal error: ${e instanceof Error ? e.stack : String(e)}\n`,
      );
      if (!res.headersSent) w.replies.sendError(res, apiErrors.backendError());
    }
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.on('connection', (socket: Socket) => {
    w.sockets.accepted++;
    w.sockets.open.add(socket);
    socket.once('close', () => w.sockets.open.delete(socket));
  });

  const { origin, port } = await listen(server, w.host, w.port, 'port');
  Object.assign(sim, {
    url: `${origin}${API_PREFIX}`,
    origin,
    controlUrl: `${origin}${CONTROL_PREFIX}`,
    port,
  });
  return sim;
}

/** What the simulator answers from, built once from its options; the request handlers share it. */
interface World {
  host: string;
  port: number;
  seed: string;
  profile: QuotaProfile;
  legacyErrors: boolean;
  /** Key → project, or undefined when any key is accepted (all on ANY_KEY_PROJECT). */
  keyMap: Map<string, string> | undefined;
  quotas: Record<string, number>;
  regions: string[];
  clock: SimClock;
  day: DayClock;
  book: QuotaBook;
  /** What was charged, by minute: Cloud Monitoring's series. */
  usage: UsageMinutes;
  /** The Google Cloud routes (token, metadata server, Monitoring, Quotas). */
  cloud: GoogleCloud;
  corpus: Corpus;
  routes: Map<string, Route>;
  faults: Faults;
  requestLog: RequestLog;
  replies: Replies;
  /** Answers held open by a `hang` fault, destroyed on close. */
  hanging: Set<ServerResponse>;
  sockets: { accepted: number; open: Set<Socket> };
}

function buildWorld(options: SimulatorOptions): World {
  const o = validated(options);
  const seed = String(o.seed ?? 'quota-guard');
  // Validates the fault options (as `faults.<field>`) before anything costly is built.
  const faults = new Faults(hash32(seed, 'faults'), options.faults ?? {});
  const profile =
    typeof o.profile === 'object' ? o.profile : (getProfile(o.profile ?? 'youtube-2026') as QuotaProfile);
  const keyMap = o.keys === undefined ? undefined : parseKeys(o.keys);
  const quotas = bucketQuotas(profile, o.quota, o.buckets ?? {});
  const regions = [...new Set((o.regions ?? DEFAULT_REGIONS).map((r) => r.toUpperCase()))];
  const clock = offsetClock(options.now ?? Date.now);
  const startedAt = clock.now();
  const day = new DayClock(
    o.dayLengthSec === undefined
      ? { kind: 'zone', timeZone: profile.timeZone }
      : { kind: 'fixed', lengthMs: Math.round(o.dayLengthSec * 1000), originMs: startedAt },
  );
  const chartPeriodSec =
    o.chartPeriodSec ?? (o.dayLengthSec === undefined ? 3_600 : Math.max(1, o.dayLengthSec / 24));
  const corpus = new Corpus({ seed, regions, periodMs: Math.round(chartPeriodSec * 1000) });
  const usage = new UsageMinutes(day);
  const book = new QuotaBook(quotas, day);
  const projects = () => [
    ...new Set<string>([...(keyMap ? keyMap.values() : [ANY_KEY_PROJECT]), ...book.projects()]),
  ];
  const cloud = new GoogleCloud(
    {
      profile,
      quotas,
      usage,
      now: () => clock.now(),
      projects,
      projectNumber: (project) => projectNumberOf(seed, project),
    },
    o.monitoringDelaySec === undefined ? undefined : Math.round(o.monitoringDelaySec * 1000),
  );
  return {
    host: o.host ?? '127.0.0.1',
    port: o.port ?? 0,
    seed,
    profile,
    legacyErrors: o.legacyErrors ?? profile.id === 'youtube-classic',
    keyMap,
    quotas,
    regions,
    clock,
    day,
    book,
    usage,
    cloud,
    corpus,
    routes: buildRoutes(corpus),
    faults,
    requestLog: new RequestLog(o.maxLog ?? 200_000, options.onRequest),
    replies: new Replies(() => faults.latency()),
    hanging: new Set(),
    sockets: { accepted: 0, open: new Set() },
  };
}

/** A project's number, as the API names the consumer in its quota answers (stable per name). */
function projectNumber(w: World, project: string): string {
  return projectNumberOf(w.seed, project);
}

function projectNumberOf(seed: string, project: string): string {
  return String(100_000_000_000 + hash32(seed, 'project', project));
}

function knownProjects(w: World): string[] {
  const set = new Set<string>(w.keyMap ? w.keyMap.values() : [ANY_KEY_PROJECT]);
  for (const p of w.book.projects()) set.add(p);
  return [...set];
}

/** One request under /youtube/v3/: admitted, charged, then a fault or the route's answer. */
function handleApi(
  w: World,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  query: URLSearchParams,
): void {
  const now = w.clock.now();
  const admitted = admit(w, req, res, path, query, now);
  if (!admitted) return;
  const { route, spec, project } = admitted;
  const charged = { at: now, method: route.method, project, bucket: spec.bucket, cost: spec.cost };
  const fits = w.book.fits(project, spec.bucket, spec.cost, now);
  w.book.charge(project, spec.bucket, spec.cost, now);
  w.usage.record(project, spec.bucket, `youtube.api.v3.${route.method}`, spec.cost, now);
  if (!fits) {
    const names = w.profile.upstreamNames[spec.bucket];
    const e =
      w.legacyErrors || spec.bucket === w.profile.defaultBucket
        ? apiErrors.quotaExceeded()
        : apiErrors.bucketExhausted(
            projectNumber(w, project),
            names ?? { displayName: spec.bucket },
            w.book.quotaOf(spec.bucket),
          );
    w.requestLog.record({ ...charged, status: e.status, reason: e.reason });
    w.replies.sendError(res, e);
    return;
  }
  if (answerFault(w, res, charged)) return;
  const answer = route.handle(query, w.corpus.epochAt(now));
  if ('error' in answer) {
    w.requestLog.record({ ...charged, status: answer.status, reason: answer.error.reason });
    w.replies.sendError(res, answer.error);
    return;
  }
  w.requestLog.record({ ...charged, status: 200 });
  w.replies.send(res, 200, answer.body);
}

/**
 * The route, its method's cost and the key's project; or undefined once an unknown path, a method
 * other than GET, or a missing or unknown key has been answered (none of them charged).
 */
function admit(
  w: World,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  query: URLSearchParams,
  now: number,
): { route: Route; spec: MethodSpec; project: string } | undefined {
  const route = path.startsWith(`${API_PREFIX}/`)
    ? w.routes.get(path.slice(API_PREFIX.length + 1))
    : undefined;
  const spec = route ? methodSpec(w.profile, route.method) : undefined;
  const base = { at: now, method: null, project: null, bucket: null, cost: 0 };
  const refuse = (entry: Omit<RequestLogEntry, 'seq'>, e: ApiError) => {
    w.requestLog.record(entry);
    w.replies.sendError(res, e);
    return undefined;
  };
  if (!route || !spec) {
    return refuse(
      { ...base, method: route && !spec ? route.method : null, status: 404, reason: 'notFound' },
      apiErrors.notFound(),
    );
  }
  if (req.method !== 'GET') {
    return refuse(
      { ...base, method: route.method, status: 405, reason: 'httpMethodNotAllowed' },
      apiErrors.methodNotAllowed(),
    );
  }
  const key = query.get('key');
  if (!key) {
    return refuse(
      { ...base, method: route.method, status: 403, reason: 'forbidden' },
      apiErrors.missingKey(),
    );
  }
  const project = w.keyMap ? w.keyMap.get(key) : ANY_KEY_PROJECT;
  if (project === undefined) {
    return refuse(
      { ...base, method: route.method, status: 400, reason: 'keyInvalid' },
      apiErrors.keyInvalid(w.legacyErrors),
    );
  }
  return { route, spec, project };
}

/** The fault plan's next fault for a charged request, answered; false when there is none. */
function answerFault(
  w: World,
  res: ServerResponse,
  charged: Omit<RequestLogEntry, 'seq' | 'status'> & { project: string },
): boolean {
  const fault = w.faults.decide();
  switch (fault.kind) {
    case 'hang':
      w.requestLog.record({ ...charged, status: 0, fault: 'hang' });
      w.hanging.add(res);
      res.once('close', () => w.hanging.delete(res));
      return true;
    case 'reset':
      w.requestLog.record({ ...charged, status: 0, fault: 'reset' });
      w.replies.reset(res);
      return true;
    case 'rateLimit': {
      const e = apiErrors.rateLimited(fault.status, fault.reason, projectNumber(w, charged.project));
      w.requestLog.record({ ...charged, status: e.status, reason: e.reason, fault: 'rateLimit' });
      w.replies.sendError(res, e, { 'retry-after': String(fault.retryAfterSec) });
      return true;
    }
    case 'error': {
      const e = apiErrors.backendError();
      w.requestLog.record({ ...charged, status: e.status, reason: e.reason, fault: 'error' });
      w.replies.sendError(res, e);
      return true;
    }
    default:
      return false;
  }
}

/** The handle startSimulator returns; its addresses are filled in once the server listens. */
function simulatorHandle(w: World, stopListening: () => Promise<void>): Simulator {
  const { profile, clock, book, quotas, day, faults, requestLog, sockets } = w;
  const sim: Simulator = {
    url: '',
    origin: '',
    controlUrl: '',
    port: 0,
    profile,
    clock,
    get requests() {
      return requestLog.entries;
    },
    charged: (filter) => book.charged(filter),
    usage: (project, bucket) => {
      if (!(bucket in quotas)) throw new QuotaGuardError('QG_UNKNOWN_BUCKET', `unknown bucket '${bucket}'`);
      return book.usage(project, bucket, clock.now());
    },
    spendBehind: (project, bucket, units) => {
      if (!(bucket in quotas)) {
        throw new QuotaGuardError(
          'QG_UNKNOWN_BUCKET',
          `bucket: no such bucket '${bucket}' in ${profile.id}`,
          {
            field: 'bucket',
          },
        );
      }
      if (!knownProjects(w).includes(project)) {
        throw new InvalidArgumentError(
          'project',
          `unknown project '${project}' (known: ${knownProjects(w).join(', ')})`,
        );
      }
      if (!Number.isInteger(units) || units < 1)
        throw new InvalidArgumentError('units', 'must be an integer >= 1');
      book.spendBehind(project, bucket, units, clock.now());
      w.usage.record(project, bucket, 'youtube.api.v3.unseen', units, clock.now());
    },
    nextResetAt: () => day.at(clock.now()).end,
    faults,
    monitoring: w.cloud,
    sockets: {
      get accepted() {
        return sockets.accepted;
      },
      get open() {
        return sockets.open.size;
      },
    },
    stats: () => simulatorStats(w, sim.url),
    close: async () => {
      w.replies.cancel();
      w.cloud.close();
      for (const res of w.hanging) res.destroy();
      w.hanging.clear();
      await stopListening();
    },
  };
  return sim;
}

function simulatorStats(w: World, url: string): SimulatorStats {
  const now = w.clock.now();
  const span = w.day.at(now);
  const projects: SimulatorStats['projects'] = {};
  for (const p of knownProjects(w)) {
    projects[p] = {};
    for (const b of w.book.buckets())
      (projects[p] as Record<string, BucketUsage>)[b] = w.book.usage(p, b, now);
  }
  return {
    url,
    profile: w.profile.id,
    seed: w.seed,
    now,
    day: { start: span.start, nextResetAt: span.end },
    chartPeriodMs: w.corpus.periodMs,
    regions: w.regions,
    projects,
    charged: w.book.charged(),
    requests: w.requestLog.counts(),
    sockets: { accepted: w.sockets.accepted, open: w.sockets.open.size },
    faults: w.faults.state(),
  };
}
