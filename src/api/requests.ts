/**
 * The decision API's request bodies, checked field by field (docs/openapi.yaml describes the same):
 * a field of the wrong type, an unknown field or a value out of range is a 400 naming the field,
 * before anything reaches the guard.
 */
import { TIERS, type Tier } from '../config/types.js';
import { InvalidArgumentError } from '../errors.js';
import type { CallOutcome } from '../guard/report.js';
import { checkJobName, JOB_OUTCOMES, type JobOutcome, MAX_RUN_AGE_MS } from '../history/types.js';

export const ENTRY_ID = /^[A-Za-z0-9_.-]{1,64}$/;
const NAME = /^[A-Za-z0-9_.:-]{1,100}$/;
export const MAX_CLIENT_TAG = 150;
export const MAX_REASON = 300;
/** How far ahead of this host's clock a run's finish may be (the client's clock may be a little ahead). */
export const RUN_CLOCK_SKEW_MS = 60_000;

export interface SpendBody {
  credential: string;
  method?: string;
  bucket?: string;
  cost?: number;
  tier: Tier;
  tag?: string;
  entry?: string;
  /**
   * The caller takes `reason: 'unknown'` for a spend whose store command may still run (it resolves
   * the entry later with /v1/record or /v1/void); without it such a spend is answered `store-down`.
   */
  allowUnknown?: boolean;
}

export interface ReportBody {
  credential: string;
  entry: string;
  outcome: CallOutcome['kind'];
  /** Exhausted until (epoch ms). */
  until?: number;
  reason?: string;
}

export interface RunBody {
  credential: string;
  /** The run id the client chose: the same id is the same run. */
  id: string;
  job: string;
  startedAt: number;
  finishedAt: number;
  outcome: JobOutcome;
  pages: number;
  units: number;
  items: number;
  reason?: string;
}

function object(body: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new InvalidArgumentError('body', 'must be a JSON object');
  }
  for (const k of Object.keys(body)) {
    if (!allowed.includes(k)) throw new InvalidArgumentError(k, 'is not a field of this request');
  }
  return body as Record<string, unknown>;
}

function text(o: Record<string, unknown>, field: string, pattern: RegExp, what: string): string | undefined {
  const v = o[field];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !pattern.test(v)) throw new InvalidArgumentError(field, `must be ${what}`);
  return v;
}

/** One line of at most MAX_REASON characters, or undefined. */
function reasonOf(o: Record<string, unknown>): string | undefined {
  const reason = o['reason'];
  if (reason === undefined) return undefined;
  if (typeof reason !== 'string' || [...reason].length > MAX_REASON || /[\p{Cc}]/u.test(reason)) {
    throw new InvalidArgumentError('reason', `must be one line of at most ${MAX_REASON} characters`);
  }
  return reason;
}

function required<T>(v: T | undefined, field: string): T {
  if (v === undefined) throw new InvalidArgumentError(field, 'is required');
  return v;
}

const SPEND_FIELDS = [
  'credential',
  'method',
  'bucket',
  'cost',
  'tier',
  'tag',
  'entry',
  'allowUnknown',
] as const;

const ENTRY_TEXT = '1 to 64 characters of A-Z a-z 0-9 _ . -';

/** What a spend and a late record share: the credential, what was spent, the tier and the tag. */
function spendFields(o: Record<string, unknown>): Omit<SpendBody, 'entry' | 'allowUnknown'> {
  const credential = required(text(o, 'credential', NAME, 'a credential id'), 'credential');
  const method = text(o, 'method', NAME, 'an API method, e.g. videos.list');
  const bucket = text(o, 'bucket', NAME, 'a bucket id');
  const tier = o['tier'] ?? 'scheduled';
  if (!(TIERS as readonly unknown[]).includes(tier)) {
    throw new InvalidArgumentError('tier', `must be one of ${TIERS.join(', ')}`);
  }
  const cost = o['cost'];
  if (cost !== undefined && (!Number.isSafeInteger(cost) || (cost as number) < 1)) {
    throw new InvalidArgumentError('cost', 'must be an integer >= 1');
  }
  if (method === undefined && bucket === undefined) {
    throw new InvalidArgumentError('method', 'a spend names a method, or a bucket (with a cost)');
  }
  const tag = o['tag'];
  if (
    tag !== undefined &&
    (typeof tag !== 'string' || tag.length > MAX_CLIENT_TAG || /[\p{Cc}]/u.test(tag))
  ) {
    throw new InvalidArgumentError('tag', `must be text of at most ${MAX_CLIENT_TAG} characters`);
  }
  return {
    credential,
    tier: tier as Tier,
    ...(method !== undefined ? { method } : {}),
    ...(bucket !== undefined ? { bucket } : {}),
    ...(cost !== undefined ? { cost: cost as number } : {}),
    ...(tag !== undefined ? { tag: tag as string } : {}),
  };
}

export function spendBody(body: unknown): SpendBody {
  const o = object(body, SPEND_FIELDS);
  const fields = spendFields(o);
  const entry = text(o, 'entry', ENTRY_ID, ENTRY_TEXT);
  const allowUnknown = o['allowUnknown'];
  if (allowUnknown !== undefined && typeof allowUnknown !== 'boolean') {
    throw new InvalidArgumentError('allowUnknown', 'must be true or false');
  }
  return {
    ...fields,
    ...(allowUnknown === true ? { allowUnknown } : {}),
    ...(entry !== undefined ? { entry } : {}),
  };
}

/** A spend made without the service's answer, to record late (`POST /v1/record`). */
export interface RecordBody extends Omit<SpendBody, 'entry' | 'allowUnknown'> {
  entry: string;
  /** When it was spent (epoch ms, the client's clock). */
  at: number;
}

const RECORD_FIELDS = ['credential', 'method', 'bucket', 'cost', 'tier', 'tag', 'entry', 'at'] as const;

export function recordBody(body: unknown): RecordBody {
  const o = object(body, RECORD_FIELDS);
  const fields = spendFields(o);
  const entry = required(text(o, 'entry', ENTRY_ID, ENTRY_TEXT), 'entry');
  return { ...fields, entry, at: epochMs(o, 'at') };
}

/** An entry whose answer was lost and which was not used (`POST /v1/void`). */
export interface VoidBody {
  credential: string;
  entry: string;
}

export function voidBody(body: unknown): VoidBody {
  const o = object(body, ['credential', 'entry']);
  return {
    credential: required(text(o, 'credential', NAME, 'a credential id'), 'credential'),
    entry: required(text(o, 'entry', ENTRY_ID, ENTRY_TEXT), 'entry'),
  };
}

const REPORT_FIELDS = ['credential', 'entry', 'outcome', 'until', 'reason'] as const;
const OUTCOMES = ['sent', 'never-sent', 'exhausted'] as const;

export function reportBody(body: unknown): ReportBody {
  const o = object(body, REPORT_FIELDS);
  const credential = required(text(o, 'credential', NAME, 'a credential id'), 'credential');
  const entry = required(text(o, 'entry', ENTRY_ID, ENTRY_TEXT), 'entry');
  const outcome = o['outcome'];
  if (!(OUTCOMES as readonly unknown[]).includes(outcome)) {
    throw new InvalidArgumentError('outcome', `must be one of ${OUTCOMES.join(', ')}`);
  }
  let until: number | undefined;
  const u = o['until'];
  if (u !== undefined) {
    if (outcome !== 'exhausted') throw new InvalidArgumentError('until', 'only with outcome exhausted');
    until = typeof u === 'number' ? u : typeof u === 'string' ? Date.parse(u) : Number.NaN;
    if (!Number.isSafeInteger(until) || until <= 0) {
      throw new InvalidArgumentError('until', 'must be an ISO 8601 time or epoch milliseconds');
    }
  }
  const reason = o['reason'];
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > MAX_REASON)) {
    throw new InvalidArgumentError('reason', `must be text of at most ${MAX_REASON} characters`);
  }
  return {
    credential,
    entry,
    outcome: outcome as ReportBody['outcome'],
    ...(until !== undefined ? { until } : {}),
    ...(reason !== undefined ? { reason: reason as string } : {}),
  };
}

const RUN_FIELDS = [
  'credential',
  'id',
  'job',
  'startedAt',
  'finishedAt',
  'outcome',
  'pages',
  'units',
  'items',
  'reason',
] as const;

/** A count: an integer >= 0, 0 when absent. */
function count(o: Record<string, unknown>, field: string): number {
  const v = o[field] ?? 0;
  if (!Number.isSafeInteger(v) || (v as number) < 0) {
    throw new InvalidArgumentError(field, 'must be an integer >= 0');
  }
  return v as number;
}

function epochMs(o: Record<string, unknown>, field: string): number {
  const v = required(o[field], field);
  if (!Number.isSafeInteger(v) || (v as number) <= 0) {
    throw new InvalidArgumentError(field, 'must be epoch milliseconds');
  }
  return v as number;
}

/**
 * A finished run to record (`POST /v1/runs`), its times checked against `nowMs`: it finished no
 * earlier than it started, not in the future (beyond RUN_CLOCK_SKEW_MS), and started within
 * MAX_RUN_AGE_MS.
 */
export function runBody(body: unknown, nowMs: number): RunBody {
  const o = object(body, RUN_FIELDS);
  const credential = required(text(o, 'credential', NAME, 'a credential id'), 'credential');
  const id = required(text(o, 'id', ENTRY_ID, ENTRY_TEXT), 'id');
  const job = checkJobName(required(o['job'], 'job'), 'job');
  const outcome = o['outcome'];
  if (!(JOB_OUTCOMES as readonly unknown[]).includes(outcome)) {
    throw new InvalidArgumentError('outcome', `must be one of ${JOB_OUTCOMES.join(', ')}`);
  }
  const startedAt = epochMs(o, 'startedAt');
  const finishedAt = epochMs(o, 'finishedAt');
  if (finishedAt < startedAt) throw new InvalidArgumentError('finishedAt', 'is before startedAt');
  if (finishedAt > nowMs + RUN_CLOCK_SKEW_MS) {
    throw new InvalidArgumentError(
      'finishedAt',
      'is in the future (check the clock of the host that ran it)',
    );
  }
  if (startedAt < nowMs - MAX_RUN_AGE_MS) {
    throw new InvalidArgumentError(
      'startedAt',
      `is more than ${MAX_RUN_AGE_MS / 86_400_000} days ago: record a run when it ends`,
    );
  }
  const reason = reasonOf(o);
  return {
    credential,
    id,
    job,
    startedAt,
    finishedAt,
    outcome: outcome as JobOutcome,
    pages: count(o, 'pages'),
    units: count(o, 'units'),
    items: count(o, 'items'),
    ...(reason !== undefined ? { reason } : {}),
  };
}
