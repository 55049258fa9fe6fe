/** What `quota-guard search` prints for people (also shown by the demo). */

import { terminalText } from '../../terminal-text.js';
import type { SearchResult } from '../../youtube/cache/types.js';
import { formatNumber } from './format.js';

/** Numbered hits with channel, views, regions and the matching excerpt. */
export function renderSearch(query: string, r: SearchResult, cachedVideos: number): string {
  if (r.hits.length === 0) {
    return cachedVideos === 0
      ? `no results for ${JSON.stringify(query)}: the cache is empty (run \`quota-guard fetch\` first)\n`
      : `no results for ${JSON.stringify(query)} among ${formatNumber(cachedVideos)} cached videos\n`;
  }
  const lines = r.hits.map((h, i) => {
    const views = h.viewCount === null ? '' : `${formatNumber(h.viewCount)} views, `;
    const regions = h.regions.length ? `trending in ${h.regions.join(' ')}` : 'not seen trending';
    // Titles, channels and descriptions come from the upstream: nothing in them may drive the terminal.
    return `${i + 1}. ${terminalText(h.title)} — ${terminalText(h.channelTitle)} (${views}${regions})\n   ${terminalText(h.snippet)}`;
  });
  const more = r.hasMore ? ' (more with --limit)' : '';
  return `${lines.join('\n')}\n${r.hits.length} hit${r.hits.length === 1 ? '' : 's'}${more}, ranked by ${r.ranking}, ${r.took.toFixed(1)} ms\n`;
}
