/**
 * The decision API under `/v1/` (docs/http-api.md, docs/openapi.yaml): any language spends from the
 * one budget over HTTP/1.1 with keep-alive. It keeps no state of its own: what it remembers (entry
 * ids and their first decisions) is in the ledger's store, so every instance over one store
 * answers alike.
 *
 * Its routes are one table (routes.ts), each with its body's schema (requests.ts). Before a route
 * runs, in this order: a request from a web page, or to a host name it does not serve, is refused
 * (callers.ts); the path and method are looked up; the caller is known by its bearer token (or is
 * the local client on loopback without a tokens file); a POST's body must be `application/json`,
 * at most 8 KiB, strict JSON without a key twice (body.ts) and match its schema. So a refused
 * request records nothing.
 *
 * Every failure is a JSON `{ error: { code, message, field? } }` with a 4xx (or 503 when the store
 * is down for a report or a status). A 401 or 403 is logged with the token's name (or "no token"),
 * never the token; repeated refusals are folded into one line with a count by the logger it is
 * given (src/log-limit.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isQuotaGuardError, type QuotaGuardError } from '../errors.js';
import type { Guard } from '../guard/guard.js';
import type { RunHistory } from '../history/types.js';
import type { Logger } from '../logger.js';
import { HttpFailure, readJson } from './body.js';
import { answerPreflight, type CallerRules, checkCaller, corsHeaders, NO_WEB_CALLERS } from './callers.js';
import { type ApiRoute, forbidden, ROUTES } from './routes.js';
import { type ApiClient, LOCAL_CLIENT, type TokenFile } from './tokens.js';

export { MAX_BODY_BYTES } from './body.js';
export type { ApiRoute } from './routes.js';

/** Every route the decision API serves, by path (docs/openapi.yaml describes each). */
export const API_ROUTES: ReadonlyMap<string, ApiRoute> = new Map(
  [...ROUTES].map(([path, r]) => [path, r.name] as const),
);

export interface DecisionApiOptions {
  guard: Guard;
  /** Where `POST /v1/runs` records runs: the run history in the guard's ledger store. */
  history: RunHistory;
  /** The bearer tokens; absent: no auth, which `serve` allows on loopback only. */
  tokens?: TokenFile;
  /** Host names and web origins allowed besides IP addresses and localhost (callers.ts). */
  callers?: CallerRules;
  logger?: Logger;
  /**
   * Called once per request answered: route, outcome (a decision's reason or an error's status),
   * client name, and how long the answer took (seconds).
   */
  onRequest?: (route: ApiRoute, outcome: string, client: string, seconds: number) => void;
  /**
   * The labels a client's run gets from its job's name (the YouTube application's: `trending:US`
   * is `{ region: 'US' }`, which counts for the region's freshness); default none.
   */
  labelsOf?: (job: string) => Record<string, string>;
}

/** A request handler for `/v1/…`: returns false for any other path (the caller serves those). */
export type DecisionApi = (req: IncomingMessage, res: ServerResponse) => boolean;

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

function isLoopbackAddress(a: string | undefined): boolean {
  return a !== undefined && (a === '::1' || a.startsWith('127.') || a.startsWith('::ffff:127.'));
}

/** Who a request says it is, for a log line: the token's name, "no token" or "an unknown token". */
type Presented = { client: ApiClient } | { none: true } | { unknown: true };

function whoSaid(p: Presented | undefined): string {
  if (p === undefined || 'none' in p) return 'no token';
  return 'unknown' in p ? 'an unknown token' : `token '${p.client.name}'`;
}

export function createDecisionApi(o: DecisionApiOptions): DecisionApi {
  const { guard, history, tokens } = o;
  const rules = o.callers ?? NO_WEB_CALLERS;
  const count = o.onRequest ?? (() => {});

  /** The caller, from its bearer token (or the local client without a tokens file). */
  function who(req: IncomingMessage): Presented {
    if (!tokens) {
      if (!isLoopbackAddress(req.socket.remoteAddress)) return { none: true };
      return { client: LOCAL_CLIENT };
    }
    const h = req.headers.authorization;
    if (h === undefined) return { none: true };
    const m = /^Bearer +(\S{1,512})\s*$/i.exec(h);
    const client = m ? tokens.authenticate(m[1]!) : undefined;
    return client ? { client } : { unknown: true };
  }

  function fail(
    req: IncomingMessage,
    res: ServerResponse,
    route: ApiRoute,
    presented: Presented | undefined,
    e: unknown,
  ): number {
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
    if (status === 401 || status === 403) {
      // Who was refused and why, never the token; the same refusal again is counted, not repeated.
      o.logger?.warn(
        { route, status, code: error.code, remote: req.socket.remoteAddress, why: error.message },
        `decision API: refused ${whoSaid(presented)} (${status} ${error.code})`,
      );
    }
    // A body left unread (refused before reading, or too large) would be taken for the next request.
    const close = !req.complete || status === 413 ? { connection: 'close' } : {};
    send(res, status, { error }, { ...corsHeaders(req, rules), ...close });
    return status;
  }

  return (req, res) => {
    const url = req.url ?? '/';
    if (!url.startsWith('/v1/')) return false;
    const started = performance.now();
    const path = url.split('?', 1)[0] ?? url;
    const route = ROUTES.get(path);
    const name: ApiRoute = route?.name ?? 'other';
    let presented: Presented | undefined;
    const done = (outcome: string) =>
      count(
        name,
        outcome,
        presented && 'client' in presented ? presented.client.name : '-',
        (performance.now() - started) / 1000,
      );
    const run = async (): Promise<void> => {
      // Who it says it is, for the log line of a refusal that comes before it counts.
      presented = who(req);
      checkCaller(req, rules);
      if (answerPreflight(req, res, rules)) {
        done('preflight');
        return;
      }
      if (!route) {
        throw new HttpFailure(404, 'not_found', `no such route: see ${[...ROUTES.keys()].join(', ')}`);
      }
      if (req.method !== route.method) {
        throw new HttpFailure(405, 'method_not_allowed', `${path} takes ${route.method}`);
      }
      if (!('client' in presented)) {
        if (!tokens) {
          throw forbidden('the decision API serves callers beyond loopback only with a tokens file');
        }
        throw new HttpFailure(401, 'unauthorized', 'a valid bearer token is required');
      }
      const now = Date.now();
      const body = route.body ? route.body(await readJson(req), now) : undefined;
      const answer = await route.handle(
        { guard, history, client: presented.client, req, now, labelsOf: o.labelsOf },
        body,
      );
      done(answer.outcome);
      send(res, 200, answer.body, { ...corsHeaders(req, rules), ...answer.headers });
    };
    run().catch((e: unknown) => {
      done(String(fail(req, res, name, presented, e)));
    });
    return true;
  };
}
