export { type SimulatorControl, simulatorControl } from './control-client.js';
export type { FaultControl, FaultKind, FaultOptions, FaultState, RateLimitBurst } from './faults.js';
export type { CloudFaultOptions, CloudFaultState, GoogleCloudControl } from './google-cloud.js';
export type { BucketUsage as SimulatorBucketUsage } from './quota.js';
export { ANY_KEY_PROJECT, DEFAULT_REGIONS as SIMULATOR_REGIONS, startSimulator } from './server.js';
export type { RequestLogEntry, SimClock, Simulator, SimulatorOptions, SimulatorStats } from './types.js';
