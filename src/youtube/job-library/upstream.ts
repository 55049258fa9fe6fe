/**
 * Upstream clients for jobs: one per credential, created on first use with the key read from the
 * credential's environment variable at that moment (never stored in the config, never logged).
 */

import type { YouTubeConfig } from '../config/types.js';
import { createYouTubeClient, type UpstreamLogger, type YouTubeClient } from '../upstream/client.js';
import type { UpstreamClients } from './types.js';

export interface UpstreamClientsOptions {
  /** Base URL override (default: the config's `upstream.baseUrl`). */
  baseUrl?: string;
  logger?: UpstreamLogger;
  /** Connections per client (default 8: enough for 8 concurrent regional jobs). */
  connections?: number;
}

export function upstreamClients(
  config: YouTubeConfig,
  options: UpstreamClientsOptions = {},
): UpstreamClients {
  const clients = new Map<string, YouTubeClient>();
  const timeout = config.upstream.timeoutMs;
  return {
    get(credentialId) {
      const id = config.credential(credentialId).id;
      let client = clients.get(id);
      if (client === undefined) {
        client = createYouTubeClient({
          baseUrl: options.baseUrl ?? config.upstream.baseUrl,
          apiKey: config.apiKey(id),
          connections: options.connections ?? 8,
          timeouts: {
            connectMs: Math.min(timeout, 5_000),
            headersMs: timeout,
            bodyMs: timeout,
            totalMs: config.upstream.deadlineMs,
          },
          maxResponseBytes: config.upstream.maxResponseBytes,
          ...(options.logger ? { logger: options.logger } : {}),
        });
        clients.set(id, client);
      }
      return client;
    },
    async close() {
      const all = [...clients.values()];
      clients.clear();
      await Promise.all(all.map((c) => c.close()));
    },
  };
}
