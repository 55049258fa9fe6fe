/**
 * A spend's tag says who spent: `<site>[:<part>…]`, e.g. `trending:US:videos.list` (a trending run
 * for region US), `backfill:videos.batchGetStats`, `spend:cli`. The first part is the call site,
 * whose store-down policy the config sets (`storeDown.sites`); `status` reads the region and the
 * method back from the other parts. Both directions live here.
 */

/** The tag of a spend by `site`, with the region and method it is for when there are ones. */
export function spendTag(site: string, ...parts: string[]): string {
  return [site, ...parts].join(':');
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
