/**
 * The decision API's request bodies as zod schemas, the same ones docs/openapi.yaml describes
 * (test/api/schemas.test.ts holds the two side by side): `null`, a wrong type, an unknown field or
 * a value out of range is a 400 naming the field, before anything reaches the guard. What a JSON
 * Schema cannot say (a spend names a method or a bucket; a run's times against this host's clock)
 * is checked right after, by the same functions, still before anything is recorded.
 */
import * as z from 'zod/mini';
import '../zod-mini.js';
import { TIERS, type Tier } from '../config/types.js';
import { InvalidArgumentError } from '../errors.js';
import type { CallOutcome } from '../guard/report.js';
import {
  checkJobName,
  JOB_OUTCOMES,
  type JobOutcome,
  MAX_JOB_NAME,
  MAX_RUN_AGE_MS,
} from '../history/types.js';

export const ENTRY_ID = /^[A-Za-z0-9_.-]{1,64}$/;
/** A credential, method or bucket name as a request may give it. */
export const NAME = /^[A-Za-z0-9_.:-]{1,100}$/;
/** Text without control characters (C0, DEL, C1): one line. */
const ONE_LINE = /^\P{Cc}*$/u;
export const MAX_CLIENT_TAG = 150;
export const MAX_REASON = 300;
/** How far ahead of this host's clock a run's finish may be (the client's clock may be a little ahead). */
export const RUN_CLOCK_SKEW_MS = 60_000;

const name = z.string().check(z.regex(NAME));
const entryId = z.string().check(z.regex(ENTRY_ID));
const count = z.optional(z.int().check(z.minimum(0)));
const epochMs = z.int().check(z.minimum(1));
const tier = z.optional(z.enum(TIERS));
const tag = z.optional(z.string().check(z.maxLength(MAX_CLIENT_TAG), z.regex(ONE_LINE)));

/** What a spend and a late record share: the credential, what was spent, the tier and the tag. */
const spendShape = {
  credential: name,
  method: z.optional(name),
  bucket: z.optional(name),
  cost: z.optional(z.int().check(z.minimum(1))),
  tier,
  tag,
};

export const SpendRequest = z.strictObject({
  ...spendShape,
  entry: z.optional(entryId),
  allowUnknown: z.optional(z.boolean()),
});

export const RecordRequest = z.strictObject({ ...spendShape, entry: entryId, at: epochMs });

export const VoidRequest = z.strictObject({ credential: name, entry: entryId });

export const ReportRequest = z.strictObject({
  credential: name,
  entry: entryId,
  outcome: z.enum(['sent', 'never-sent', 'exhausted']),
  until: z.optional(z.union([z.iso.datetime({ offset: true }), epochMs])),
  reason: z.optional(z.string().check(z.maxLength(MAX_REASON))),
});

export const RunRequest = z.strictObject({
  credential: name,
  id: entryId,
  job: z.string().check(z.maxLength(MAX_JOB_NAME)),
  startedAt: epochMs,
  finishedAt: epochMs,
  outcome: z.enum(JOB_OUTCOMES),
  pages: count,
  units: count,
  items: count,
  reason: z.optional(z.string().check(z.maxLength(MAX_REASON), z.regex(ONE_LINE))),
});

/** What a field must be, said in a 400 (`cost: must be an integer >= 1`). */
const WHAT: Readonly<Record<string, string>> = {
  credential: 'a credential id (1 to 100 characters of A-Z a-z 0-9 _ . : -)',
  method: 'an API method, e.g. videos.list',
  bucket: 'a bucket id',
  cost: 'an integer >= 1',
  tier: `one of ${TIERS.join(', ')}`,
  tag: `text of at most ${MAX_CLIENT_TAG} characters, one line`,
  entry: '1 to 64 characters of A-Z a-z 0-9 _ . -',
  id: '1 to 64 characters of A-Z a-z 0-9 _ . -',
  allowUnknown: 'true or false',
  at: 'epoch milliseconds',
  startedAt: 'epoch milliseconds',
  finishedAt: 'epoch milliseconds',
  outcome: 'one of the outcomes this route takes',
  until: 'an ISO 8601 time or epoch milliseconds',
  reason: `one line of at most ${MAX_REASON} characters`,
  job: `one line of at most ${MAX_JOB_NAME} characters, without '|'`,
  pages: 'an integer >= 0',
  units: 'an integer >= 0',
  items: 'an integer >= 0',
};

/** The first thing wrong with a body, as the 400 that names its field. */
function invalid(issues: readonly z.core.$ZodIssue[]): InvalidArgumentError {
  const issue = issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    return new InvalidArgumentError(String(issue.keys[0]), 'is not a field of this request');
  }
  const field = issue.path.map(String).join('.');
  if (field === '') return new InvalidArgumentError('body', 'must be a JSON object');
  if (issue.code === 'invalid_type' && issue.input === undefined) {
    return new InvalidArgumentError(field, 'is required');
  }
  const outcome = issue.code === 'invalid_value' && field === 'outcome' ? issue.values.join(', ') : undefined;
  return new InvalidArgumentError(
    field,
    `must be ${outcome ? `one of ${outcome}` : (WHAT[field] ?? 'valid')}`,
  );
}

function parse<T>(schema: z.ZodMiniType<T>, body: unknown): T {
  const r = schema.safeParse(body);
  if (!r.success) throw invalid(r.error.issues);
  return r.data;
}

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

/** A spend names what it spends: a method, or a bucket (with a cost). */
function spendFields<
  B extends { method?: string | undefined; bucket?: string | undefined; tier?: Tier | undefined },
>(b: B): B & { tier: Tier } {
  if (b.method === undefined && b.bucket === undefined) {
    throw new InvalidArgumentError('method', 'a spend names a method, or a bucket (with a cost)');
  }
  return { ...b, tier: b.tier ?? 'scheduled' };
}

/** `o` as T with its undefined fields left out (an optional field is absent, never undefined). */
function defined<T>(o: object): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

export function spendBody(body: unknown): SpendBody {
  const b = spendFields(parse(SpendRequest, body));
  // `allowUnknown: false` is the same as leaving it out.
  return defined<SpendBody>({ ...b, allowUnknown: b.allowUnknown === true ? true : undefined });
}

/** A spend made without the service's answer, to record late (`POST /v1/record`). */
export interface RecordBody extends Omit<SpendBody, 'entry' | 'allowUnknown'> {
  entry: string;
  /** When it was spent (epoch ms, the client's clock). */
  at: number;
}

export function recordBody(body: unknown): RecordBody {
  return defined<RecordBody>(spendFields(parse(RecordRequest, body)));
}

/** An entry whose answer was lost and which was not used (`POST /v1/void`). */
export interface VoidBody {
  credential: string;
  entry: string;
}

export function voidBody(body: unknown): VoidBody {
  return parse(VoidRequest, body);
}

export interface ReportBody {
  credential: string;
  entry: string;
  outcome: CallOutcome['kind'];
  /** Exhausted until (epoch ms). */
  until?: number;
  reason?: string;
}

export function reportBody(body: unknown): ReportBody {
  const b = parse(ReportRequest, body);
  let until: number | undefined;
  if (b.until !== undefined) {
    if (b.outcome !== 'exhausted') throw new InvalidArgumentError('until', 'only with outcome exhausted');
    until = typeof b.until === 'number' ? b.until : Date.parse(b.until);
    if (!Number.isSafeInteger(until) || until <= 0) {
      throw new InvalidArgumentError('until', `must be ${WHAT['until']}`);
    }
  }
  return defined<ReportBody>({ ...b, until });
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

/**
 * A finished run to record (`POST /v1/runs`), its times checked against `nowMs`: it finished no
 * earlier than it started, not in the future (beyond RUN_CLOCK_SKEW_MS), and started within
 * MAX_RUN_AGE_MS.
 */
export function runBody(body: unknown, nowMs: number): RunBody {
  const b = parse(RunRequest, body);
  const job = checkJobName(b.job, 'job');
  if (b.finishedAt < b.startedAt) throw new InvalidArgumentError('finishedAt', 'is before startedAt');
  if (b.finishedAt > nowMs + RUN_CLOCK_SKEW_MS) {
    throw new InvalidArgumentError(
      'finishedAt',
      'is in the future (check the clock of the host that ran it)',
    );
  }
  if (b.startedAt < nowMs - MAX_RUN_AGE_MS) {
    throw new InvalidArgumentError(
      'startedAt',
      `is more than ${MAX_RUN_AGE_MS / 86_400_000} days ago: record a run when it ends`,
    );
  }
  return defined<RunBody>({ ...b, job, pages: b.pages ?? 0, units: b.units ?? 0, items: b.items ?? 0 });
}
