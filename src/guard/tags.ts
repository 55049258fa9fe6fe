/**
 * A spend's tag says who spent: `<site>[:<part>…]`, e.g. `trending:US:videos.list` (a trending run
 * for region US), `backfill:videos.batchGetStats`, `spend:cli`. The first part is the call site,
 * whose store-down policy the config sets (`storeDown.sites`); `status` reads the region and the
 * method back from the other parts. Both directions live here.
 */
import { MAX_TAG_LENGTH } from '../ledger/validate.js';

/** The tag of a spend by `site`, with the region and method it is for when there are ones. */
export function spendTag(site: string, ...parts: string[]): string {
  return [site, ...parts].join(':');
}

/**
 * `tag` with the method it spent for as one more part, unless it names it already or would then be
 * longer than a ledger keeps: `status` reads the method back from the tag (`parseTag`).
 */
export function withMethod(tag: string, method: string | undefined): string {
  if (method === undefined || tag.split(':').includes(method)) return tag;
  const out = `${tag}:${method}`;
  return out.length <= MAX_TAG_LENGTH ? out : tag;
}

/** The call site of a tag: its first part. */
export function siteOf(tag: string): string {
  return tag.split(':')[0] ?? '';
}

/**
 * `trending:US:videos.list` → region US, method videos.list: the first two-letter upper-case part
 * and the first part that names one of `methods`. Tags are also written by people (`spend --tag`),
 * so unrecognised parts are ignored.
 */
export function parseTag(
  tag: string,
  methods: Record<string, unknown>,
): { region?: string; method?: string } {
  const out: { region?: string; method?: string } = {};
  for (const part of tag.split(':')) {
    if (out.region === undefined && /^[A-Z]{2}$/.test(part)) out.region = part;
    else if (out.method === undefined && Object.hasOwn(methods, part)) out.method = part;
  }
  return out;
}
