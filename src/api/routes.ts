/**
 * The decision API's one route table: each route's path, HTTP method, body (checked against its
 * schema in requests.ts before the handler runs) and handler. docs/openapi.yaml describes the same
 * routes and bodies (test/api/schemas.test.ts and test/api/openapi-document.test.ts hold the three
 * side by side). A handler returns its answer and the outcome the metrics count; a refusal is
 * thrown (an HttpFailure or a QuotaGuardError) and nothing is recorded.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type * as z from 'zod/mini';
import { InvalidArgumentError } from '../errors.js';
import type { Guard } from '../guard/guard.js';
import { quotaStatus } from '../guard/status.js';
import type { SpendArgs } from '../guard/types.js';
import type { RunHistory, RunSummary } from '../history/types.js';
import { usedAfter } from '../runs/summary.js';
import { runAnswer, spendAnswer } from './answers.js';
import { HttpFailure } from './body.js';
import { clientTag, type LateFailures, recordLate, spentBy, voidLate } from './late.js';
import {
  type RecordBody,
  RecordRequest,
  type ReportBody,
  ReportRequest,
  type RunBody,
  RunRequest,
  recordBody,
  reportBody,
  runBody,
  type SpendBody,
  SpendRequest,
  spendBody,
  type VoidBody,
  VoidRequest,
  voidBody,
} from './requests.js';
import { type ApiClient, mayUse } from './tokens.js';

export type ApiRoute = 'spend' | 'report' | 'runs' | 'record' | 'void' | 'status' | 'other';

/** What a route's handler is given besides its body. */
export interface RouteContext {
  guard: Guard;
  history: RunHistory;
  client: ApiClient;
  req: IncomingMessage;
  now: number;
  /** The labels a client's run gets from its job's name (DecisionApiOptions.labelsOf). */
  labelsOf?: ((job: string) => Record<string, string>) | undefined;
}

export interface RouteAnswer {
  body: unknown;
  /** What the metrics count for it (a decision's reason, an outcome, `recorded`…). */
  outcome: string;
  headers?: Record<string, string>;
}

export interface Route<B = unknown> {
  name: Exclude<ApiRoute, 'other'>;
  method: 'GET' | 'POST';
  /** The body's schema (what docs/openapi.yaml describes as the route's request body). */
  schema?: z.ZodMiniType;
  /** The JSON body checked against the schema, then against what a schema cannot say. */
  body?: (raw: unknown, now: number) => B;
  handle(c: RouteContext, body: B): Promise<RouteAnswer>;
}

/** A route of the table, its body's type checked here and forgotten in the table. */
const route = <B>(r: Route<B>): Route => r as Route;

export function forbidden(message: string): HttpFailure {
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

async function spend({ guard, client }: RouteContext, body: SpendBody): Promise<RouteAnswer> {
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
  const outcome = await guard.spend(args);
  const answer = spendAnswer(outcome, outcome.entry ?? '', body.allowUnknown === true);
  return {
    body: answer,
    outcome: outcome.replayed ? 'replayed' : String(answer['reason']),
    ...(outcome.retryAfterMs > 0
      ? { headers: { 'retry-after': String(Math.ceil(outcome.retryAfterMs / 1000)) } }
      : {}),
  };
}

async function report({ guard, client }: RouteContext, body: ReportBody): Promise<RouteAnswer> {
  if (!mayUse(client, body.credential)) {
    throw forbidden(`token '${client.name}' may not report for credential '${body.credential}'`);
  }
  if (body.outcome === 'exhausted' && !client.mayBlock) {
    throw forbidden(`token '${client.name}' may not report an exhausted quota`);
  }
  const args = await guard.recallEntry(body.credential, body.entry);
  // Another client's entry is as unknown to this one as an entry never spent.
  if (!args || !spentBy(args.tag, client)) throw unknownEntry(body.entry);
  const spent = await guard.spend({ ...args, failMode: 'closed', entry: body.entry, recallOnly: true });
  if (spent.reason === 'store-down' || spent.reason === 'fail-open') {
    throw new HttpFailure(503, 'QG_STORE_UNAVAILABLE', 'the ledger store is unavailable; report again later');
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
    body: {
      entry: body.entry,
      outcome: body.outcome,
      credential: spent.credential,
      bucket: spent.bucket,
      allowed: spent.allowed,
    },
    outcome: body.outcome,
  };
}

async function runs(
  { guard, history, client, now, labelsOf }: RouteContext,
  body: RunBody,
): Promise<RouteAnswer> {
  if (!mayUse(client, body.credential)) {
    throw forbidden(`token '${client.name}' may not record runs of credential '${body.credential}'`);
  }
  const credential = guard.config.credential(body.credential).id;
  const run: RunSummary = {
    credential,
    job: body.job,
    labels: labelsOf?.(body.job) ?? {},
    startedAt: body.startedAt,
    finishedAt: body.finishedAt,
    outcome: body.outcome,
    pages: body.pages,
    units: body.units,
    items: body.items,
    reason: body.reason ?? null,
    // As the CLI's runs: what the buckets hold after the run (a clock ahead of ours reads now).
    used: await usedAfter(guard.config, guard.ledger, credential, Math.min(body.finishedAt, now)),
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
  const r = await history.record(run, { id: body.id, request });
  return { body: runAnswer(r.run, body.id, r.replayed), outcome: r.replayed ? 'replayed' : 'recorded' };
}

async function record({ guard, client }: RouteContext, body: RecordBody): Promise<RouteAnswer> {
  const answer = await recordLate(guard, body, client, LATE_FAILURES);
  return { body: answer, outcome: String(answer['outcome']) };
}

async function voidEntry({ guard, client, now }: RouteContext, body: VoidBody): Promise<RouteAnswer> {
  const answer = await voidLate(guard, body, client, LATE_FAILURES, now);
  return { body: answer, outcome: String(answer['outcome']) };
}

async function status({ guard, client, req }: RouteContext): Promise<RouteAnswer> {
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
  return { body: { ...r, credentials: r.credentials.filter((c) => mayUse(client, c.id)) }, outcome: 'ok' };
}

/** Every route the decision API serves, by path (docs/openapi.yaml describes each). */
export const ROUTES: ReadonlyMap<string, Route> = new Map<string, Route>([
  [
    '/v1/spend',
    route({ name: 'spend', method: 'POST', schema: SpendRequest, body: spendBody, handle: spend }),
  ],
  [
    '/v1/report',
    route({ name: 'report', method: 'POST', schema: ReportRequest, body: reportBody, handle: report }),
  ],
  ['/v1/runs', route({ name: 'runs', method: 'POST', schema: RunRequest, body: runBody, handle: runs })],
  [
    '/v1/record',
    route({ name: 'record', method: 'POST', schema: RecordRequest, body: recordBody, handle: record }),
  ],
  [
    '/v1/void',
    route({ name: 'void', method: 'POST', schema: VoidRequest, body: voidBody, handle: voidEntry }),
  ],
  ['/v1/status', route({ name: 'status', method: 'GET', handle: status })],
]);
