export { checkHealth, type Health, type HealthCheck, type HealthSources } from './health.js';
export { createMetrics, jobLabels, METRIC_PREFIX, type MetricSources, Metrics } from './metrics.js';
export {
  DEFAULT_HTTP_HOST,
  DEFAULT_HTTP_PORT,
  type HttpAddress,
  isLoopback,
  type MetricsServer,
  type MetricsServerOptions,
  parseHttpAddress,
  startMetricsServer,
} from './server.js';
