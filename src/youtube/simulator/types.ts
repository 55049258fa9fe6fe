/**
 * The simulator's public shapes: its options, its handle, its request log and its stats. They sit
 * apart from server.ts so the control routes and the control client can name them without
 * importing the server that imports the routes.
 */
import type { ProfileId, QuotaProfile } from '../../profiles/profiles.js';
import type { FaultControl, FaultKind, FaultOptions, FaultState } from './faults.js';
import type { GoogleCloudControl } from './google-cloud.js';
import type { BucketUsage } from './quota.js';

export interface SimulatorOptions {
  /** Default 0 (a free port). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /**
   * Accepted API keys: `'K'` (its own project, named `project-<n>` after its position in the
   * list) or `'K@project'` (several keys may share one project's quota). Omitted: any non-empty
   * key is accepted, all on the project `default`.
   */
  keys?: readonly string[];
  /** Quota model: a built-in profile's id or a profile (e.g. a config's own; default youtube-2026). */
  profile?: ProfileId | QuotaProfile;
  /**
   * Answer errors as the API did before the granular quota: a bad key is 400 `keyInvalid` without
   * details, every used-up bucket 403 `quotaExceeded`. Default: on for youtube-classic, off for
   * youtube-2026 (a bad key is 400 `badRequest` + ErrorInfo `API_KEY_INVALID`, a used-up granular
   * bucket 429 naming its per-day limit).
   */
  legacyErrors?: boolean;
  /** Daily units of the main `units` bucket (default from the profile: 10,000). */
  quota?: number;
  /** Daily units of other buckets, e.g. `{ 'search.list': 5 }`. */
  buckets?: Readonly<Record<string, number>>;
  /** Seed of the synthetic data (default 'quota-guard'). */
  seed?: string | number;
  /** Drills: the simulator's midnight comes every this many seconds (from start) instead of in Los Angeles. */
  dayLengthSec?: number;
  /** Charts move on every this many seconds (default 3600, or a 24th of dayLengthSec). */
  chartPeriodSec?: number;
  /** The simulator's clock source (default Date.now); `clock.set/advance` shift it. */
  now?: () => number;
  /** Regions with a trending chart (default US, GB, DE, FR, IN, BR, AU, CA). */
  regions?: readonly string[];
  faults?: FaultOptions;
  /** Request log entries kept in memory (default 200,000; older ones are dropped, totals are not). */
  maxLog?: number;
  /**
   * Cloud Monitoring's delay: a minute's usage point shows this many seconds after the minute ends
   * (default four minutes; in a compressed day, four of its minutes).
   */
  monitoringDelaySec?: number;
  /** Called for every request served (after the log entry is recorded). */
  onRequest?: (entry: RequestLogEntry) => void;
}

export interface RequestLogEntry {
  /** 1, 2, 3, … in arrival order. */
  seq: number;
  /** Simulated time (epoch ms). */
  at: number;
  /** The API method, or null when the path is not one. */
  method: string | null;
  project: string | null;
  bucket: string | null;
  /** Units charged (0 when not charged). */
  cost: number;
  /** HTTP status answered, or 0 when no answer was sent (reset, hang). */
  status: number;
  /** Google's reason for an error answer. */
  reason?: string;
  fault?: FaultKind | 'rateLimit';
}

export interface SimClock {
  now(): number;
  set(ms: number): void;
  advance(ms: number): void;
}

export interface SimulatorStats {
  url: string;
  profile: ProfileId;
  seed: string;
  now: number;
  day: { start: number; nextResetAt: number };
  chartPeriodMs: number;
  regions: readonly string[];
  /** Today's usage and all-time charges per project and bucket. */
  projects: Record<string, Record<string, BucketUsage>>;
  charged: number;
  requests: {
    total: number;
    kept: number;
    byStatus: Record<string, number>;
    byMethod: Record<string, number>;
  };
  sockets: { accepted: number; open: number };
  faults: FaultState;
}

export interface Simulator {
  /** Base URL for the client: `http://127.0.0.1:<port>/youtube/v3`. */
  readonly url: string;
  readonly origin: string;
  readonly controlUrl: string;
  readonly port: number;
  readonly profile: QuotaProfile;
  readonly clock: SimClock;
  /** Requests served, oldest first (bounded by maxLog). */
  readonly requests: readonly RequestLogEntry[];
  /** Units charged for served requests since start (spend-behind excluded). */
  charged(filter?: { project?: string; bucket?: string }): number;
  /** Today's usage of a bucket of a project. */
  usage(project: string, bucket: string): BucketUsage;
  /** Someone else spends `units` of the project's bucket today, behind the guard's back. */
  spendBehind(project: string, bucket: string, units: number): void;
  /** Epoch ms of the simulator's next quota reset. */
  nextResetAt(): number;
  readonly faults: FaultControl;
  /** The Google Cloud side: Monitoring's minute and delay, tokens, its faults (google-cloud.ts). */
  readonly monitoring: GoogleCloudControl;
  /** Connections accepted so far and open now. */
  readonly sockets: { readonly accepted: number; readonly open: number };
  stats(): SimulatorStats;
  close(): Promise<void>;
}
