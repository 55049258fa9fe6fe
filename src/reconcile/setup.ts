/**
 * The count source a config asks for: Cloud Monitoring, with the config's key file (or Application
 * Default Credentials) and limits. One place for `quota-guard reconcile` and the scheduled
 * reconcile of `run` and `serve`.
 */
import type { Config } from '../config/types.js';
import type { Logger } from '../logger.js';
import { type AccessTokenSource, googleAuthTokens } from './google-auth.js';
import { cloudMonitoringSource } from './google-monitoring.js';
import type { UpstreamCountSource } from './source.js';

/** The tokens for reading Monitoring of `project` (the first project, for Application Default Credentials). */
export function reconcileTokens(config: Pick<Config, 'reconcile'>, project: string): AccessTokenSource {
  const { keyFile } = config.reconcile;
  return googleAuthTokens({ projectId: project, ...(keyFile !== undefined ? { keyFile } : {}) });
}

/** Cloud Monitoring as the config sets it up, with `tokens`. */
export function monitoringSourceFor(
  config: Pick<Config, 'reconcile'>,
  tokens: AccessTokenSource,
  logger?: Logger,
): UpstreamCountSource {
  const { monitoring } = config.reconcile;
  return cloudMonitoringSource({
    tokens,
    baseUrl: monitoring.baseUrl,
    deadlineMs: monitoring.deadlineMs,
    maxResponseBytes: monitoring.maxResponseBytes,
    settings: {
      deadline: 'reconcile.monitoring.deadline',
      maxResponseBytes: 'reconcile.monitoring.maxResponseBytes',
    },
    ...(logger ? { logger } : {}),
  });
}
