/**
 * Where the upstream's own count comes from: for one project (what the upstream meters: a Google
 * Cloud project), some of its quotas and a span of whole minutes, how many units the upstream says
 * it charged in each minute. Cloud Monitoring (google-monitoring.ts) is the first implementation;
 * another upstream's usage report is another one. The reconcile (reconciler.ts) knows only this.
 */

/** One quota to read: the bucket it is the count of, and the upstream's name for it. */
export interface CountedQuota {
  bucket: string;
  /** The upstream's name of the quota, e.g. `youtube.googleapis.com/default` (a quota metric). */
  metric: string;
}

export interface CountQuery {
  /** The project whose usage is read, e.g. a Google Cloud project id. */
  project: string;
  quotas: readonly CountedQuota[];
  /**
   * The upstream's name of the count to read, when it keeps several (Cloud Monitoring's metric
   * type, e.g. `serviceruntime.googleapis.com/quota/rate/net_usage`); omitted: the source's own.
   */
  usageMetric?: string;
  /** The span's first minute (epoch ms, on a minute boundary). */
  fromMs: number;
  /** The end of the span's last minute (epoch ms, exclusive). */
  toMs: number;
  /** The length of a minute in ms: 60,000, or less in a compressed day. */
  minuteMs: number;
  signal?: AbortSignal;
}

export interface CountAnswer {
  /** Per bucket asked for: the units charged in each minute of the span, oldest first. */
  perMinute: Record<string, number[]>;
  /** Requests it took (pages read), for the cost of the reads. */
  reads: number;
}

export interface UpstreamCountSource {
  /** What the counts come from, for messages: `Cloud Monitoring`. */
  readonly name: string;
  /**
   * The upstream's count. Rejects with a `QuotaGuardError` naming the cause (no permission, no
   * such project, unreachable, too slow, a partial or malformed answer); never answers in part.
   */
  count(query: CountQuery): Promise<CountAnswer>;
  close(): Promise<void>;
}

/** The span's minutes: how many there are, and the index of the minute an instant falls in. */
export function minutesOf(query: Pick<CountQuery, 'fromMs' | 'toMs' | 'minuteMs'>): number {
  return Math.max(0, Math.round((query.toMs - query.fromMs) / query.minuteMs));
}
