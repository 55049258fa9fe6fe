export {
  cronTicks,
  type ScheduledJob,
  Scheduler,
  type SchedulerEvent,
  type SchedulerOptions,
  type TickSource,
} from './scheduler.js';
export {
  observeScheduler,
  type ScheduledJobsOptions,
  type Service,
  type ServiceOptions,
  scheduledJobs,
  startService,
} from './service.js';
