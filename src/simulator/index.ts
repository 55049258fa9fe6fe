export { type SimulatorControl, simulatorControl } from './control.js';
export type { FaultControl, FaultKind, FaultOptions, FaultState, RateLimitBurst } from './faults.js';
export type { BucketUsage } from './quota.js';
export {
  ANY_KEY_PROJECT,
  DEFAULT_REGIONS,
  type RequestLogEntry,
  type SimClock,
  type Simulator,
  type SimulatorOptions,
  type SimulatorStats,
  startSimulator,
} from './server.js';
