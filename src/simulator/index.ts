export { type SimulatorControl, simulatorControl } from './control-client.js';
export type { FaultControl, FaultKind, FaultOptions, FaultState, RateLimitBurst } from './faults.js';
export type { BucketUsage as SimulatorBucketUsage } from './quota.js';
export {
  ANY_KEY_PROJECT,
  DEFAULT_REGIONS as SIMULATOR_REGIONS,
  type RequestLogEntry,
  type SimClock,
  type Simulator,
  type SimulatorOptions,
  type SimulatorStats,
  startSimulator,
} from './server.js';
