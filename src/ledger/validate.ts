/**
 * Input checks shared by every backend. They run before anything reaches a store, so a bad call
 * fails the same way on Redis and SQLite: an InvalidArgumentError naming the field, or a
 * CostExceedsLimitError for a cost that could never fit.
 */
import { describeValue, isPositiveInt, positiveInt } from '../argument-checks.js';
import { MAX_WINDOW_MS } from '../config/defaults.js';
import { CostExceedsLimitError, InvalidArgumentError } from '../errors.js';
import type {
  Budget,
  Decision,
  EntryBudget,
  PeekRequest,
  PerMinuteRequest,
  RecordRequest,
  SpendEntry,
  SpendRequest,
  VoidRequest,
} from './types.js';

/** The longest tag a ledger keeps. */
export const MAX_TAG_LENGTH = 200;
const MAX_KEY_LENGTH = 512;
const MAX_REASON_LENGTH = 500;
const MAX_BUDGETS = 16;
const MAX_AMOUNTS = 32;

export { MAX_WINDOW_MS };

function isValidKey(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0 && v.length <= MAX_KEY_LENGTH;
}

export function validateKey(field: string, v: unknown): string {
  if (typeof v !== 'string' || v.length === 0) {
    throw new InvalidArgumentError(field, `must be a non-empty string, got ${describeValue(v)}`);
  }
  if (v.length > MAX_KEY_LENGTH) {
    throw new InvalidArgumentError(field, `must be at most ${MAX_KEY_LENGTH} characters, got ${v.length}`);
  }
  return v;
}

function optionalText(field: string, v: unknown, max: number): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string')
    throw new InvalidArgumentError(field, `must be a string, got ${describeValue(v)}`);
  if (v.length > max)
    throw new InvalidArgumentError(field, `must be at most ${max} characters, got ${v.length}`);
  return v;
}

export interface ValidSpend {
  budgets: Budget[];
  cost: number;
  tag: string;
  entry?: SpendEntry;
}

export const ENTRY_ID = /^[A-Za-z0-9_.-]{1,64}$/;
export const MAX_ENTRY_REQUEST_LENGTH = 1000;

/** An entry's key and id (what `void` takes). */
function validateEntryId(v: unknown, shape: string): Pick<SpendEntry, 'key' | 'id'> {
  if (typeof v !== 'object' || v === null) {
    throw new InvalidArgumentError('entry', `must be an object ${shape}, got ${describeValue(v)}`);
  }
  const e = v as Partial<SpendEntry>;
  validateKey('entry.key', e.key);
  if (typeof e.id !== 'string' || !ENTRY_ID.test(e.id)) {
    throw new InvalidArgumentError(
      'entry.id',
      `must be 1 to 64 characters of A-Z a-z 0-9 _ . -, got ${describeValue(e.id)}`,
    );
  }
  return { key: e.key as string, id: e.id };
}

function validateEntry(v: unknown): SpendEntry {
  validateEntryId(v, '{ key, id, request }');
  const e = v as SpendEntry;
  if (typeof e.request !== 'string' || e.request.length > MAX_ENTRY_REQUEST_LENGTH) {
    throw new InvalidArgumentError(
      'entry.request',
      `must be a string of at most ${MAX_ENTRY_REQUEST_LENGTH} characters`,
    );
  }
  return {
    key: e.key as string,
    id: e.id,
    request: e.request,
    ...(e.recallOnly === true ? { recallOnly: true } : {}),
  };
}

export function validateSpend(req: unknown): ValidSpend {
  if (typeof req !== 'object' || req === null) {
    throw new InvalidArgumentError('spend', `expects an object, got ${describeValue(req)}`);
  }
  const r = req as Partial<SpendRequest>;
  if (!Array.isArray(r.budgets) || r.budgets.length === 0) {
    throw new InvalidArgumentError('budgets', 'must be a non-empty array of { key, limit, windowMs }');
  }
  if (r.budgets.length > MAX_BUDGETS) {
    throw new InvalidArgumentError(
      'budgets',
      `at most ${MAX_BUDGETS} budgets per spend, got ${r.budgets.length}`,
    );
  }
  const cost = positiveInt('cost', r.cost);
  const tag = optionalText('tag', r.tag, MAX_TAG_LENGTH);
  const budgets: Budget[] = [];
  for (let i = 0; i < r.budgets.length; i++) {
    const b = r.budgets[i] as Partial<Budget> | null | undefined;
    if (typeof b !== 'object' || b === null) {
      throw new InvalidArgumentError(`budgets[${i}]`, `must be an object { key, limit, windowMs }`);
    }
    const { key, limit, windowMs } = b;
    if (!isValidKey(key)) validateKey(`budgets[${i}].key`, key);
    for (let j = 0; j < i; j++) {
      if (budgets[j]!.key === key) {
        throw new InvalidArgumentError(`budgets[${i}].key`, `'${key}' appears twice in one spend`);
      }
    }
    if (!isPositiveInt(limit, Number.MAX_SAFE_INTEGER)) positiveInt(`budgets[${i}].limit`, limit);
    if (!isPositiveInt(windowMs, MAX_WINDOW_MS))
      positiveInt(`budgets[${i}].windowMs`, windowMs, MAX_WINDOW_MS);
    budgets.push({ key: key as string, limit: limit as number, windowMs: windowMs as number });
  }
  for (let i = 0; i < budgets.length; i++) {
    const b = budgets[i]!;
    if (cost > b.limit) {
      throw new CostExceedsLimitError(
        `cost: ${cost} is more than budgets[${i}].limit ${b.limit} on key '${b.key}'; it could never be allowed`,
        { field: 'cost', details: { key: b.key, cost, limit: b.limit } },
      );
    }
  }
  if (r.entry === undefined) return { budgets, cost, tag };
  return { budgets, cost, tag, entry: validateEntry(r.entry) };
}

/** `record`'s and `void`'s budgets: keys (no repeats) and windows; a limit is not looked at. */
function validateEntryBudgets(v: unknown): EntryBudget[] {
  if (!Array.isArray(v) || v.length === 0) {
    throw new InvalidArgumentError('budgets', 'must be a non-empty array of { key, windowMs }');
  }
  if (v.length > MAX_BUDGETS) {
    throw new InvalidArgumentError('budgets', `at most ${MAX_BUDGETS} budgets, got ${v.length}`);
  }
  const budgets: EntryBudget[] = [];
  v.forEach((b: unknown, i) => {
    if (typeof b !== 'object' || b === null) {
      throw new InvalidArgumentError(`budgets[${i}]`, 'must be an object { key, windowMs }');
    }
    const { key, windowMs } = b as Partial<EntryBudget>;
    validateKey(`budgets[${i}].key`, key);
    if (budgets.some((x) => x.key === key)) {
      throw new InvalidArgumentError(`budgets[${i}].key`, `'${key}' appears twice`);
    }
    budgets.push({
      key: key as string,
      windowMs: positiveInt(`budgets[${i}].windowMs`, windowMs, MAX_WINDOW_MS),
    });
  });
  return budgets;
}

/** An epoch time in ms: a whole number >= 0. */
function epochMs(field: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    throw new InvalidArgumentError(field, `must be an epoch time in whole ms, got ${describeValue(v)}`);
  }
  return v;
}

export interface ValidRecord {
  budgets: EntryBudget[];
  cost: number;
  tag: string;
  entry: SpendEntry;
  at: number;
  replace: boolean;
}

export function validateRecord(req: unknown): ValidRecord {
  if (typeof req !== 'object' || req === null) {
    throw new InvalidArgumentError('record', `expects an object, got ${describeValue(req)}`);
  }
  const r = req as Partial<RecordRequest>;
  if (r.replace !== undefined && typeof r.replace !== 'boolean') {
    throw new InvalidArgumentError('replace', `must be a boolean, got ${describeValue(r.replace)}`);
  }
  const replace = r.replace === true;
  const budgets = validateEntryBudgets(r.budgets);
  if (replace && typeof r.cost === 'number' && (!Number.isSafeInteger(r.cost) || r.cost < 0)) {
    throw new InvalidArgumentError(
      'cost',
      `must be an integer >= 0 with replace, got ${describeValue(r.cost)}`,
    );
  }
  const cost = replace && r.cost === 0 ? 0 : positiveInt('cost', r.cost);
  const tag = optionalText('tag', r.tag, MAX_TAG_LENGTH);
  if (r.entry === undefined)
    throw new InvalidArgumentError('entry', 'is required: a record counts once per entry id');
  const entry = validateEntry(r.entry);
  if (entry.recallOnly) throw new InvalidArgumentError('entry.recallOnly', 'is for spends only');
  return { budgets, cost, tag, entry, at: epochMs('at', r.at), replace };
}

export function validateVoid(req: unknown): VoidRequest & { budgets: EntryBudget[] } {
  if (typeof req !== 'object' || req === null) {
    throw new InvalidArgumentError('void', `expects an object { entry, budgets }, got ${describeValue(req)}`);
  }
  const r = req as Partial<VoidRequest>;
  const budgets = validateEntryBudgets(r.budgets);
  return { entry: validateEntryId(r.entry, '{ key, id }'), budgets };
}

export function validatePerMinute(req: unknown): PerMinuteRequest {
  const { key, windowMs } = validatePeek(req);
  const r = req as Partial<PerMinuteRequest>;
  const fromMs = epochMs('fromMs', r.fromMs);
  const toMs = epochMs('toMs', r.toMs);
  if (toMs <= fromMs) throw new InvalidArgumentError('toMs', `must be after fromMs (${fromMs}), got ${toMs}`);
  if (r.minuteMs === undefined) return { key, windowMs, fromMs, toMs };
  return { key, windowMs, fromMs, toMs, minuteMs: positiveInt('minuteMs', r.minuteMs, 60_000) };
}

export function validatePeek(req: unknown): PeekRequest {
  if (typeof req !== 'object' || req === null) {
    throw new InvalidArgumentError('peek', `expects an object { key, windowMs }, got ${describeValue(req)}`);
  }
  const r = req as Partial<PeekRequest>;
  return { key: validateKey('key', r.key), windowMs: positiveInt('windowMs', r.windowMs, MAX_WINDOW_MS) };
}

export function validateFreesUpIn(req: unknown): PeekRequest & { limit: number; amounts: number[] } {
  const { key, windowMs } = validatePeek(req);
  const r = req as { limit?: unknown; amounts?: unknown };
  const limit = positiveInt('limit', r.limit);
  if (!Array.isArray(r.amounts) || r.amounts.length === 0 || r.amounts.length > MAX_AMOUNTS) {
    throw new InvalidArgumentError('amounts', `must be a non-empty array of at most ${MAX_AMOUNTS} integers`);
  }
  const amounts = r.amounts.map((a, i) => positiveInt(`amounts[${i}]`, a));
  return { key, windowMs, limit, amounts };
}

export function validateBlock(key: unknown, untilEpochMs: unknown, reason: unknown) {
  const k = validateKey('key', key);
  if (typeof untilEpochMs !== 'number' || !Number.isFinite(untilEpochMs) || untilEpochMs < 0) {
    throw new InvalidArgumentError(
      'untilEpochMs',
      `must be an epoch time in ms, got ${describeValue(untilEpochMs)}`,
    );
  }
  return {
    key: k,
    untilEpochMs: Math.ceil(untilEpochMs),
    reason: optionalText('reason', reason, MAX_REASON_LENGTH),
  };
}

/** A refund of anything but an allowed decision is a no-op; returns undefined then. */
export function validateRefund(d: unknown): { keys: string[]; id: string } | undefined {
  if (typeof d !== 'object' || d === null) {
    throw new InvalidArgumentError(
      'decision',
      `must be a Decision returned by spend, got ${describeValue(d)}`,
    );
  }
  const dec = d as Partial<Decision>;
  if (!dec.allowed) return undefined;
  if (typeof dec.id !== 'string' || dec.id.length === 0) {
    throw new InvalidArgumentError('decision.id', 'missing: pass the Decision returned by spend unchanged');
  }
  if (!Array.isArray(dec.keys) || dec.keys.length === 0) {
    throw new InvalidArgumentError('decision.keys', 'missing: pass the Decision returned by spend unchanged');
  }
  const keys = dec.keys.map((k, i) => validateKey(`decision.keys[${i}]`, k));
  return { keys, id: dec.id };
}
