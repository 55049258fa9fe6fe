/**
 * Builds a `JobContext` from the pieces a command already holds (config, guard, logger): opens the
 * config's cache and creates the upstream clients lazily. `close` releases both.
 */

import type { Config } from '../../config/types.js';
import type { Guard } from '../../guard/guard.js';
import type { GuardLogger } from '../../guard/types.js';
import { lazyRunHistory } from '../../history/lazy.js';
import type { RunHistory } from '../../history/types.js';
import { openCache } from '../cache/index.js';
import { youtubeConfig } from '../config/resolver.js';
import type { JobContext } from './types.js';
import { type UpstreamClientsOptions, upstreamClients } from './upstream.js';

export interface OpenJobContextOptions extends UpstreamClientsOptions {
  /** The cache file (default: the config's `cache.path`). */
  cachePath?: string;
  /**
   * Where finished runs are summarised (closed with the context). Default: the run history in the
   * config's store, opened at the first run that ends, so in-process runs show in `history`,
   * region freshness and the status page like the CLI's; `false` records nothing.
   */
  history?: RunHistory | false;
  now?: () => number;
}

export interface OpenedJobContext extends JobContext, AsyncDisposable {
  /** Close the upstream clients, the cache and the run history it opened (not the guard's ledger). */
  close(): Promise<void>;
}

export function openJobContext(
  base: { config: Config; guard: Guard; logger: GuardLogger; history?: RunHistory },
  options: OpenJobContextOptions = {},
): OpenedJobContext {
  const config = youtubeConfig(base.config);
  const cache = openCache(options.cachePath ?? config.cache.path, options.now ? { now: options.now } : {});
  // The jobs' logger serves the upstream client too (redacted request lines at debug, failures at warn).
  const { history: given, ...clientOptions } = options;
  const upstream = upstreamClients(config, { logger: base.logger, ...clientOptions });
  // A `QuotaGuard` handed in as `base` brings its run history, which it closes itself.
  const borrowed = given === undefined ? base.history : undefined;
  const history = given === false ? undefined : (given ?? borrowed ?? lazyRunHistory(base.config.store));
  const close = async (): Promise<void> => {
    try {
      await upstream.close();
    } finally {
      cache.close();
      if (history !== borrowed) await history?.close();
    }
  };
  return {
    config,
    guard: base.guard,
    logger: base.logger,
    cache,
    upstream,
    ...(options.now ? { now: options.now } : {}),
    ...(history ? { history } : {}),
    close,
    [Symbol.asyncDispose]: close,
  };
}
