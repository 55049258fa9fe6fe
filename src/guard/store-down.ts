/**
 * The store-down policy: when the ledger's store does not answer, a call site fails open (the
 * spend goes ahead unrecorded) or closed (it is refused). `storeDown.sites` names sites, `auto`
 * lets cheap calls through (`openMaxCost`), a call can say its own `failMode`, and `caller` hands
 * the decision back to whoever spends (the decision API's clients). A spend whose answer never came
 * is handed to the settler, which keeps or takes it back once the store answers.
 */
import { byName } from '../config/names.js';
import type { Config, FailMode } from '../config/types.js';
import { StoreUnavailableError } from '../errors.js';
import type { Ledger } from '../ledger/types.js';
import type { Settler } from './settle.js';
import { siteOf } from './tags.js';
import type { GuardEvent, GuardLogger, GuardStats, SpendArgs, SpendOutcome } from './types.js';

/** Whether a spend at this call site fails open or closed while the store is down. */
export function failModeOf(config: Config, args: SpendArgs, cost: number, tag: string): FailMode {
  // The caller decides: an unanswered spend is kept as it lands, as when open.
  if (args.failMode === 'caller') return 'open';
  const site = args.site ?? siteOf(tag);
  const policy = args.failMode ?? byName(config.storeDown.sites, site) ?? config.storeDown.default;
  if (policy === 'auto') return cost <= config.storeDown.openMaxCost ? 'open' : 'closed';
  return policy;
}

/** The parts of the guard the store-down path uses (the guard hands them over; nothing here is public). */
export interface StoreDownDeps {
  config: Config;
  ledger: Ledger;
  logger: GuardLogger;
  /** The guard's counters: fail-open and fail-closed spends are counted here. */
  stats: GuardStats;
  settler: Settler<SpendOutcome>;
  emit(e: GuardEvent): void;
}

/**
 * A spend the store did not answer: the call site's fail mode decides, logged and emitted; a spend
 * whose answer may still land is settled once the store answers.
 */
export function storeDownOutcome(
  deps: StoreDownDeps,
  base: Omit<SpendOutcome, 'allowed' | 'reason' | 'retryAfterMs'>,
  args: SpendArgs,
  error: unknown,
): SpendOutcome {
  const failMode = failModeOf(deps.config, args, base.cost, base.tag);
  const detail = {
    credential: base.credential,
    bucket: base.bucket,
    method: base.method,
    tier: base.tier,
    cost: base.cost,
    tag: base.tag,
    failMode,
    error: (error as Error).message,
  };
  const open = failMode === 'open';
  // Sent but not answered: the store may still apply it, so it is settled once the store answers.
  const unsettled =
    error instanceof StoreUnavailableError && deps.ledger.settle ? error.unsettled : undefined;
  if (args.failMode === 'caller') {
    const outcome: SpendOutcome = {
      ...base,
      allowed: false,
      reason: 'store-down',
      retryAfterMs: 0,
      ...(unsettled ? { unsettled } : {}),
    };
    deps.logger.warn(
      { ...detail, failMode: 'caller', ...(unsettled ? { unsettled: true } : {}) },
      unsettled
        ? 'ledger store did not answer: answered store-down, the caller applies its own fail mode; kept if the store recorded it'
        : 'ledger store unavailable: answered store-down, the caller applies its own fail mode',
    );
    if (unsettled) deps.settler.add(unsettled, false, outcome);
    deps.emit({ type: 'store-down', outcome, error });
    return outcome;
  }
  const outcome: SpendOutcome = {
    ...base,
    allowed: open,
    reason: open ? 'fail-open' : 'store-down',
    retryAfterMs: 0,
    failMode,
    ...(unsettled ? { unsettled } : {}),
  };
  if (open) {
    if (!unsettled) deps.stats.failOpen++;
    deps.logger.warn(
      { ...detail, failOpenTotal: deps.stats.failOpen, ...(unsettled ? { unsettled: true } : {}) },
      unsettled
        ? 'ledger store did not answer: spend allowed; whether it was recorded is settled when the store answers (fail-open)'
        : 'ledger store unavailable: spend allowed without recording it (fail-open)',
    );
  } else {
    deps.stats.failClosed++;
    deps.logger.warn(
      detail,
      unsettled
        ? 'ledger store did not answer: spend refused; taken back if the store recorded it (fail-closed)'
        : 'ledger store unavailable: spend refused (fail-closed)',
    );
  }
  // A refused spend never reaches the upstream: if the store applied it after all, take it back.
  if (unsettled) deps.settler.add(unsettled, !open, outcome);
  if (open) deps.emit({ type: 'fail-open', outcome, error, unsettled: unsettled !== undefined });
  else deps.emit({ type: 'fail-closed', outcome, error });
  return outcome;
}
