/**
 * Each backfill run of a drill's day and why it ended — its pacing line, its ceiling, a budget, the
 * upstream running dry, the day's end — with the line as it ended, so that a day that leaves units
 * unspent says where they went.
 */
import type { PacingLine } from '../guard/pacing.js';
import type { SchedulerEvent } from '../scheduler/scheduler.js';
import type { JobResult } from '../youtube/job-library/types.js';
import type { BackfillEnd, DrillBackfillRun } from './types.js';

/** Why a backfill run ended, in the drill's words (see `DrillBackfillRun.end`). */
export function backfillEnd(r: JobResult, bucket: string): BackfillEnd {
  if (r.outcome === 'done') return 'done';
  if (r.outcome === 'aborted') return 'day-end';
  const stop = r.stop;
  if (r.outcome !== 'stopped' || stop === undefined) return 'other';
  switch (stop.reason) {
    case 'budget':
      if (stop.limitedBy === `${bucket} backfill pace`) return 'line';
      return stop.limitedBy === undefined || stop.limitedBy === bucket ? 'headroom' : 'budget';
    case 'upstream-quota':
    case 'blocked':
      return 'upstream';
    case 'aborted':
      return 'day-end';
    default:
      return 'other';
  }
}

/**
 * Watches the scheduler for the backfill's finished runs and reads the pacing line as each ends
 * (at the latest the day's last ms: the line of the day it spent in).
 */
export function watchBackfillRuns(o: {
  bucket: string;
  fraction: (at: number) => number;
  lastMs: number;
  line: (at: number) => Promise<PacingLine | undefined>;
}): { on(e: SchedulerEvent): void; runs(): Promise<DrillBackfillRun[]> } {
  const runs: Array<Promise<DrillBackfillRun>> = [];
  const describe = async (r: JobResult, at: number): Promise<DrillBackfillRun> => {
    const line = await o.line(Math.min(at, o.lastMs)).catch(() => undefined);
    return {
      from: o.fraction(r.startedAt),
      to: o.fraction(r.finishedAt),
      outcome: r.outcome,
      units: r.units,
      end: backfillEnd(r, o.bucket),
      ...(r.outcome === 'stopped' && r.resumeAt !== undefined ? { resumeAt: o.fraction(r.resumeAt) } : {}),
      ...(r.reason !== undefined ? { reason: r.reason } : {}),
      ...(line
        ? {
            line: {
              spentToday: line.spentToday,
              allowed: line.allowed,
              allowance: line.allowance,
              belowCeiling: Math.max(0, line.ceiling - line.used),
            },
          }
        : {}),
    };
  };
  return {
    on(e) {
      if (e.type === 'finish' && e.result.job === 'backfill') runs.push(describe(e.result, e.at));
    },
    runs: () => Promise.all(runs),
  };
}

/** One line per kind of end, for the utilisation check: `line 2, upstream 1`. */
export function endsText(runs: readonly DrillBackfillRun[]): string {
  const n = new Map<BackfillEnd, number>();
  for (const r of runs) n.set(r.end, (n.get(r.end) ?? 0) + 1);
  return [...n].map(([end, count]) => `${end} ${count}`).join(', ');
}
