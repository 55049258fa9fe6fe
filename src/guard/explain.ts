/**
 * Ledger errors in the operator's terms. The ledger knows only keys (`qg:{default}:budget:small`)
 * and the arrays of one call (`budgets[1].limit`); the operator knows the config. A cost that can
 * never fit or a window that no longer matches the ledger's log is rewritten here to name the bucket
 * or budget, the config setting behind it and what to change.
 */
import { formatDuration } from '../config/duration.js';
import type { Config, CredentialConfig } from '../config/types.js';
import { CostExceedsLimitError, isQuotaGuardError, QuotaGuardError } from '../errors.js';
import { bucketWindow, budgetKey, paceKey } from './keys.js';

/** What a ledger key of a credential stands for in the config. */
interface KeySource {
  /** e.g. `bucket 'units' of credential 'default'`. */
  name: string;
  /** The settings that give the key its window, and its limit. */
  windowSetting: string;
  limitSetting: string;
  /** Another id starts a new log (budgets only). */
  renamable: boolean;
}

function sourceOf(
  config: Config,
  credential: CredentialConfig,
  key: string,
  nowMs: number,
): KeySource | undefined {
  const i = config.credentials.findIndex((c) => c.id === credential.id);
  const at = `credentials[${i}]`;
  for (const b of Object.values(credential.buckets)) {
    const of = `bucket '${b.id}' of credential '${credential.id}'`;
    if (bucketWindow(credential, b, nowMs).key === key)
      return {
        name: of,
        windowSetting: `${at}.window or ${at}.buckets.${b.id}.window`,
        limitSetting: `${at}.buckets.${b.id}.quota, less the reserve and headroom for the scheduled and backfill tiers`,
        renamable: false,
      };
    if (paceKey(credential.id, b.id) === key)
      return {
        name: `the pace of ${of}`,
        windowSetting: `${at}.pace.window or ${at}.buckets.${b.id}.pace.window`,
        limitSetting: `${at}.pace.limit or ${at}.buckets.${b.id}.pace.limit`,
        renamable: false,
      };
  }
  for (const b of credential.budgets)
    if (budgetKey(credential.id, b.id) === key)
      return {
        name: `budget '${b.id}'${config.credentials.length > 1 ? ` of credential '${credential.id}'` : ''}`,
        windowSetting: `the window of budget '${b.id}' in budgets`,
        limitSetting: `the limit of budget '${b.id}' in budgets`,
        renamable: true,
      };
  return undefined;
}

const units = (n: unknown) => (typeof n === 'number' ? new Intl.NumberFormat('en-US').format(n) : String(n));

/**
 * `e` rewritten in the config's terms when it is a cost that can never fit or a window mismatch on
 * one of `credential`'s keys (same code, the original as its cause); otherwise `e` unchanged.
 */
export function explainLedgerError(
  e: unknown,
  config: Config,
  credential: CredentialConfig,
  nowMs: number = Date.now(),
): unknown {
  if (!isQuotaGuardError(e)) return e;
  const d = e.details ?? {};
  const key = d['key'];
  if (typeof key !== 'string') return e;
  const source = sourceOf(config, credential, key, nowMs);
  if (!source) return e;
  if (e.code === 'QG_COST_EXCEEDS_LIMIT') {
    return new CostExceedsLimitError(
      `a cost of ${units(d['cost'])} units can never be allowed: ${source.name} allows at most ${units(d['limit'])} (${source.limitSetting})`,
      { cause: e, field: 'cost', details: d },
    );
  }
  if (e.code === 'QG_WINDOW_MISMATCH') {
    const stored = Number(d['storedWindowMs']);
    const wanted = Number(d['requestedWindowMs']);
    return new QuotaGuardError(
      e.code,
      `${source.name} has a window of ${formatDuration(wanted)} in the config (${source.windowSetting}) but the ledger logged its spends under ${formatDuration(stored)}, and a log keeps its window until they expire (${formatDuration(stored)} after the last one): set it back to ${formatDuration(stored)} until then${source.renamable ? ', or give the budget a new id (a new log)' : ''}`,
      { cause: e, details: d },
    );
  }
  return e;
}
