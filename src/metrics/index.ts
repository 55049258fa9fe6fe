export {
  DEFAULT_HTTP_HOST,
  DEFAULT_HTTP_PORT,
  type HttpAddress,
  isLoopback,
  parseHttpAddress,
} from '../http-address.js';
export { checkHealth, type Health, type HealthCheck, type HealthSources } from './health.js';
export { createMetrics, jobLabels, METRIC_PREFIX, type MetricSources, Metrics } from './metrics.js';
export {
  type MetricsServer,
  type MetricsServerOptions,
  startMetricsServer,
} from './server.js';
