export {
  type DrillBucket,
  type DrillCheck,
  type DrillOptions,
  type DrillReport,
  runDrill,
  scaledHourSeconds,
} from './drill.js';
export { drillSvg } from './svg.js';
