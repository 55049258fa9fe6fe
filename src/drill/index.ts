export {
  type DrillBucket,
  type DrillCheck,
  type DrillOptions,
  type DrillReport,
  runDrill,
  scaledHourSeconds,
} from './drill.js';
