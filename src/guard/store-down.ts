/**
 * The store-down policy: when the ledger's store does not answer, a call site fails open (the
 * spend goes ahead unrecorded) or closed (it is refused). `storeDown.sites` names sites, `auto`
 * lets cheap calls through (`openMaxCost`), a call can say its own `failMode`.
 */
import type { Config, FailMode } from '../config/types.js';
import { siteOf } from './tags.js';
import type { SpendArgs } from './types.js';

/** Whether a spend at this call site fails open or closed while the store is down. */
export function failModeOf(config: Config, args: SpendArgs, cost: number, tag: string): FailMode {
  // The caller decides: an unanswered spend is kept as it lands, as when open.
  if (args.failMode === 'caller') return 'open';
  const site = args.site ?? siteOf(tag);
  const policy = args.failMode ?? config.storeDown.sites[site] ?? config.storeDown.default;
  if (policy === 'auto') return cost <= config.storeDown.openMaxCost ? 'open' : 'closed';
  return policy;
}
