/**
 * The decision API under `/v1/` (docs/http-api.md, docs/openapi.yaml): any language spends from the
 * one budget over HTTP/1.1 with keep-alive. It keeps no state of its own: what it remembers (entry
 * ids and their first decisions) is in the ledger's store, so every instance over one store
 * answers alike.
 *
 * - `POST /v1/spend`: one guard decision. A denial is a 200 answer (with Retry-After and the
 *   resume time), as is a store that is down (`reason: store-down`: the caller's fail mode decides).
 * - `POST /v1/report`: what became of an entry's call (sent, never sent, exhausted), idempotent.
 * - `POST /v1/runs`: one finished run of the caller's job, recorded in the run history under the
 *   token's name, once per run id (remembered in the store like an entry id).
 * - `POST /v1/record`, `POST /v1/void`: a spend made without an answer, recorded late; an unknown
 *   spend not used, voided (late.ts).
 * - `GET /v1/status`: the credentials' buckets, as `quota-guard status --json` shows them.
 *
 * Every failure is a JSON `{ error: { code, message, field? } }` with a 4xx (or 503 when the store
 * is down for a report or a status); a refused request records nothing.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidArgumentError, isQuotaGuardError, type QuotaGuardError } from '../errors.js';
import type { Guard } from '../guard/guard.js';
import { quotaStatus } from '../guard/status.js';
import type { SpendArgs, SpendOutcome } from '../guard/types.js';
import { type RunHistory, type RunSummary, withCompatibleFields } from '../history/types.js';
import type { Logger } from '../logger.js';
import { usedAfter } from '../runs/summary.js';
import { spendAnswer } from './answer.js';
import { clientTag, type LateFailures, recordLate, voidLate } from './late.js';
import {
  type ReportBody,
  type RunBody,
  recordBody,
  reportBody,
  runBody,
  type SpendBody,
  spendBody,
  voidBody,
} from './requests.js';
import { type ApiClient, LOCAL_CLIENT, mayUse, type TokenFile } from './tokens.js';

/** Largest request body accepted (bytes); a spend is about 150. */
export const MAX_BODY_BYTES = 8 * 1024;

export type ApiRoute = 'spend' | 'report' | 'runs' | 'record' | 'void' | 'status' | 'other';

/** Every route the decision API serves (docs/openapi.yaml describes each). */
export const API_ROUTES: ReadonlyMap<string, ApiRoute> = new Map<string, ApiRoute>([
  ['/v1/spend', 'spend'],
  ['/v1/report', 'report'],
  ['/v1/runs', 'runs'],
  ['/v1/record', 'record'],
  ['/v1/void', 'void'],
  ['/v1/status', 'status'],
]);

export interface DecisionApiOptions {
  guard: Guard;
  /** Where `POST /v1/runs` records runs: the run history in the guard's ledger store. */
  history: RunHistory;
  /** The bearer tokens; absent: no auth, which `serve` allows on loopback only. */
  tokens?: TokenFile;
  logger?: Logger;
  /** Called once per request answered: route, outcome (a decision's reason or an error name), client name. */
  onRequest?: (route: ApiRoute, outcome: string, client: string) => void;
  /**
   * The labels a client's run gets from its job's name (the YouTube application's: `trending:US`
   * is `{ region: 'US' }`, which counts for the region's freshness); default none.
   */
  labelsOf?: (job: string) => Record<string, string>;
}

/** A request handler for `/v1/…`: returns false for any other path (the caller serves those). */
export type DecisionApi = (req: IncomingMessage, res: ServerResponse) => boolean;

class HttpFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

const JSON_TYPE = 'application/json';

function send(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': JSON_TYPE,
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

/** The body as parsed JSON; a body over the limit or not JSON is an HttpFailure. */
function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > MAX_BODY_BYTES) {
      reject(new HttpFailure(413, 'too_large', `the body is over ${MAX_BODY_BYTES} bytes`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (c: Buffer) => {
      if (failed) return;
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        failed = true;
        reject(new HttpFailure(413, 'too_large', `the body is over ${MAX_BODY_BYTES} bytes`));
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (failed) return;
      const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
      try {
        resolve(JSON.parse(text));
      } catch {
        reject(new HttpFailure(400, 'malformed_json', 'the body is not JSON'));
      }
    });
    req.on('error', () => {
      failed = true;
      reject(new HttpFailure(400, 'aborted', 'the request was not received whole'));
    });
  });
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** A recorded run's answer: the run as the history holds it (with `region`, as 0.2 answered). */
export function runAnswer(r: RunSummary, id: string, replayed: boolean): Record<string, unknown> {
  const { region } = withCompatibleFields(r);
  return {
    id,
    replayed,
    credential: r.credential,
    job: r.job,
    ...(r.client !== undefined ? { client: r.client } : {}),
    ...(region !== null ? { region } : {}),
    labels: r.labels,
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
    outcome: r.outcome,
    pages: r.pages,
    units: r.units,
    items: r.items,
    ...(r.reason !== null ? { reason: r.reason } : {}),
    used: r.used,
  };
}

/** A QuotaGuardError as an HTTP status: the caller's mistakes are 4xx, a store that is down 503. */
function statusOf(e: QuotaGuardError): number {
  switch (e.code) {
    case 'QG_ENTRY_CONFLICT':
      return 409;
    case 'QG_ENTRY_UNKNOWN':
    case 'QG_UNKNOWN_CREDENTIAL':
      return 404;
    case 'QG_STORE_UNAVAILABLE':
      return 503;
    case 'QG_INVALID_ARGUMENT':
    case 'QG_COST_EXCEEDS_LIMIT':
    case 'QG_UNKNOWN_METHOD':
    case 'QG_UNKNOWN_BUCKET':
    case 'QG_WINDOW_MISMATCH':
      return 400;
    default:
      return 500;
  }
}

function forbidden(message: string): HttpFailure {
  return new HttpFailure(403, 'forbidden', message);
}

function unknownEntry(entry: string): HttpFailure {
  return new HttpFailure(
    404,
    'QG_ENTRY_UNKNOWN',
    `entry '${entry}' is not known: never spent, or its window has passed`,
  );
}

const LATE_FAILURES: LateFailures = { forbidden, unknownEntry };

const newEntryId = (): string => randomBytes(12).toString('base64url');

function isLoopbackAddress(a: string | undefined): boolean {
  return a !== undefined && (a === '::1' || a.startsWith('127.') || a.startsWith('::ffff:127.'));
}

export function createDecisionApi(o: DecisionApiOptions): DecisionApi {
  const { guard, tokens } = o;
  const count = o.onRequest ?? (() => {});

  /** The caller, from its bearer token (or the local client without a tokens file). */
  function who(req: IncomingMessage): ApiClient {
    if (!tokens) {
      if (!isLoopbackAddress(req.socket.remoteAddress)) {
        throw forbidden('the decision API serves callers beyond loopback only with a tokens file');
      }
      return LOCAL_CLIENT;
    }
    const h = req.headers.authorization;
    const m = h === undefined ? null : /^Bearer +(\S{1,512})\s*$/i.exec(h);
    const client = m ? tokens.authenticate(m[1]!) : undefined;
    if (!client) throw new HttpFailure(401, 'unauthorized', 'a valid bearer token is required');
    return client;
  }

  async function spend(body: SpendBody, client: ApiClient): Promise<SpendOutcome> {
    if (!mayUse(client, body.credential)) {
      throw forbidden(`token '${client.name}' may not spend credential '${body.credential}'`);
    }
    if (!client.tiers.includes(body.tier)) {
      throw forbidden(`token '${client.name}' may not spend the ${body.tier} tier`);
    }
    const args: SpendArgs = {
      credential: body.credential,
      tier: body.tier,
      tag: clientTag(client, body),
      // The answer says the store is down and the caller's own fail mode decides; an unanswered
      // spend is kept as it lands (a retry with its entry id is then answered as it was).
      failMode: 'caller',
      entry: body.entry ?? newEntryId(),
      ...(body.method !== undefined ? { method: body.method } : {}),
      ...(body.bucket !== undefined ? { bucket: body.bucket } : {}),
      ...(body.cost !== undefined ? { cost: body.cost } : {}),
    };
    return guard.spend(args);
  }

  async function report(body: ReportBody, client: ApiClient): Promise<Record<string, unknown>> {
    if (!mayUse(client, body.credential)) {
      throw forbidden(`token '${client.name}' may not report for credential '${body.credential}'`);
    }
    if (body.outcome === 'exhausted' && !client.mayBlock) {
      throw forbidden(`token '${client.name}' may not report an exhausted quota`);
    }
    const args = await guard.recallEntry(body.credential, body.entry);
    // Another client's entry is as unknown to this one as an entry never spent.
    if (!args?.tag?.startsWith(`${client.name}:`)) throw unknownEntry(body.entry);
    const spent = await guard.spend({ ...args, failMode: 'closed', entry: body.entry, recallOnly: true });
    if (spent.reason === 'store-down' || spent.reason === 'fail-open') {
      throw new HttpFailure(
        503,
        'QG_STORE_UNAVAILABLE',
        'the ledger store is unavailable; report again later',
      );
    }
    await guard.report(
      spent,
      body.outcome === 'exhausted'
        ? {
            kind: 'exhausted',
            ...(body.until !== undefined ? { until: body.until } : {}),
            ...(body.reason !== undefined ? { reason: `${body.reason} (reported by ${client.name})` } : {}),
          }
        : { kind: body.outcome },
    );
    return {
      entry: body.entry,
      outcome: body.outcome,
      credential: spent.credential,
      bucket: spent.bucket,
      allowed: spent.allowed,
    };
  }

  async function recordRun(
    body: RunBody,
    client: ApiClient,
    nowMs: number,
  ): Promise<Record<string, unknown>> {
    if (!mayUse(client, body.credential)) {
      throw forbidden(`token '${client.name}' may not record runs of credential '${body.credential}'`);
    }
    const credential = guard.config.credential(body.credential).id;
    const run: RunSummary = {
      credential,
      job: body.job,
      labels: o.labelsOf?.(body.job) ?? {},
      startedAt: body.startedAt,
      finishedAt: body.finishedAt,
      outcome: body.outcome,
      pages: body.pages,
      units: body.units,
      items: body.items,
      reason: body.reason ?? null,
      // As the CLI's runs: what the buckets hold after the run (a clock ahead of ours reads now).
      used: await usedAfter(guard.config, guard.ledger, credential, Math.min(body.finishedAt, nowMs)),
      client: client.name,
    };
    // The run as the client words it, the token included: the same id with any other is a conflict.
    const request = JSON.stringify([
      client.name,
      credential,
      body.job,
      body.startedAt,
      body.finishedAt,
      body.outcome,
      body.pages,
      body.units,
      body.items,
      body.reason ?? null,
    ]);
    const r = await o.history.record(run, { id: body.id, request });
    return runAnswer(r.run, body.id, r.replayed);
  }

  async function status(req: IncomingMessage, client: ApiClient): Promise<unknown> {
    const credential = new URL(req.url ?? '/', 'http://x').searchParams.get('credential') ?? undefined;
    if (credential === '') {
      throw new InvalidArgumentError('credential', 'is empty: name a credential, or leave it out for all');
    }
    if (credential !== undefined && !mayUse(client, credential)) {
      throw forbidden(`token '${client.name}' may not read credential '${credential}'`);
    }
    const r = await quotaStatus(guard.config, guard.ledger, {
      pacer: guard.pacer,
      ...(credential !== undefined ? { credential } : {}),
    });
    return { ...r, credentials: r.credentials.filter((c) => mayUse(client, c.id)) };
  }

  function fail(res: ServerResponse, route: ApiRoute, client: string, e: unknown): void {
    let status: number;
    let error: { code: string; message: string; field?: string };
    if (e instanceof HttpFailure) {
      status = e.status;
      error = { code: e.code, message: e.message, ...(e.field ? { field: e.field } : {}) };
    } else if (isQuotaGuardError(e)) {
      status = statusOf(e);
      error = { code: e.code, message: e.message, ...(e.field !== undefined ? { field: e.field } : {}) };
    } else {
      status = 500;
      error = { code: 'QG_INTERNAL', message: 'internal error' };
      o.logger?.error?.({ route, error: (e as Error)?.message }, 'decision API: internal error');
    }
    if (status >= 500 && status !== 503) {
      o.logger?.error?.({ route, code: error.code }, 'decision API: request failed');
    }
    count(route, String(status), client);
    // A body left unread (too large) would be taken for the next request: close the connection.
    send(res, status, { error }, status === 413 ? { connection: 'close' } : undefined);
  }

  return (req, res) => {
    const url = req.url ?? '/';
    if (!url.startsWith('/v1/')) return false;
    const path = url.split('?', 1)[0] ?? url;
    const route: ApiRoute = API_ROUTES.get(path) ?? 'other';
    let client = '-';
    const run = async (): Promise<void> => {
      if (route === 'other')
        throw new HttpFailure(404, 'not_found', `no such route: see ${[...API_ROUTES.keys()].join(', ')}`);
      const wantMethod = route === 'status' ? 'GET' : 'POST';
      if (req.method !== wantMethod) {
        throw new HttpFailure(405, 'method_not_allowed', `${path} takes ${wantMethod}`);
      }
      const c = who(req);
      client = c.name;
      if (route === 'status') {
        const body = await status(req, c);
        count(route, 'ok', client);
        send(res, 200, body);
        return;
      }
      const raw = await readJson(req);
      if (route === 'spend') {
        const body = spendBody(raw);
        const outcome = await spend(body, c);
        const answer = spendAnswer(outcome, outcome.entry ?? '', body.allowUnknown === true);
        count(route, outcome.replayed ? 'replayed' : String(answer['reason']), client);
        send(
          res,
          200,
          answer,
          outcome.retryAfterMs > 0
            ? { 'retry-after': String(Math.ceil(outcome.retryAfterMs / 1000)) }
            : undefined,
        );
        return;
      }
      if (route === 'record' || route === 'void') {
        const answer =
          route === 'record'
            ? await recordLate(guard, recordBody(raw), c, LATE_FAILURES, Date.now())
            : await voidLate(guard, voidBody(raw), c, LATE_FAILURES, Date.now());
        count(route, String(answer['outcome']), client);
        send(res, 200, answer);
        return;
      }
      if (route === 'runs') {
        const now = Date.now();
        const answer = await recordRun(runBody(raw, now), c, now);
        count(route, answer['replayed'] ? 'replayed' : 'recorded', client);
        send(res, 200, answer);
        return;
      }
      const answer = await report(reportBody(raw), c);
      count(route, String(answer['outcome']), client);
      send(res, 200, answer);
    };
    run().catch((e: unknown) => {
      // A body not read (refused before reading) must not be taken for the next request.
      if (!req.complete) res.setHeader('connection', 'close');
      fail(res, route, client, e);
    });
    return true;
  };
}
