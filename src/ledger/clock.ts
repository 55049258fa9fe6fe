/**
 * Steps of the host clock, seen by the SQLite ledger. The ledger's windows are measured on the wall
 * clock (`Date.now`), which NTP may step: a host that booted with a wrong clock and is corrected,
 * or an operator's `date -s`. Left alone, a step forward then back let a whole second budget through
 * in the same real hour and then held the budget shut for a day.
 *
 * Every decision records the wall clock next to the host's monotonic clock (CLOCK_MONOTONIC,
 * shared by every process of one boot, never stepped). The next decision compares how far each has
 * moved: when the wall clock moved more than TOLERANCE_MS away from the monotonic one, the wall
 * clock was stepped by the difference. The ledger then moves every stored time by the same amount,
 * so each entry keeps its real age: nothing expires early (no over-admission) and nothing is held
 * late (no blocking beyond the real window).
 *
 * Across a reboot the monotonic clock starts again and the two cannot be compared: a wall clock
 * behind the last decision is then treated as if no time had passed since it (conservative: the
 * budget stays as it was, and frees as real time passes); a step forward across a reboot cannot be
 * told from downtime. docs/ledger.md, "Clock steps".
 */
import { readFileSync } from 'node:fs';

/** A difference between the two clocks below this is noise (sampling, NTP slewing), not a step. */
export const CLOCK_STEP_TOLERANCE_MS = 1_000;

/** The host's monotonic clock in ms (CLOCK_MONOTONIC on Linux: one origin for every process of a boot). */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** Identifies this boot, so that monotonic readings of two processes are only compared within one. */
export const BOOT_ID: string = (() => {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    // No boot id (not Linux): readings compare only within this process.
    return `process:${process.pid}:${Date.now()}`;
  }
})();

/** What the ledger last recorded. */
export interface ClockMark {
  wall: number;
  mono: number;
  boot: string;
}

/** A detected step, given to `onClockStep` once (by the process that re-dates the ledger). */
export interface ClockStep {
  /** How far the wall clock jumped: positive forward, negative back (ms). */
  stepMs: number;
  /** The wall clock after the step (epoch ms). */
  at: number;
  /** `monotonic`: measured against the monotonic clock; `reboot`: behind the last decision of an earlier boot. */
  how: 'monotonic' | 'reboot';
}

let stepsCorrected = 0;

/** Steps this process's SQLite ledgers detected and corrected (for the metric). */
export function clockStepsCorrected(): number {
  return stepsCorrected;
}

/** Counts one corrected step (called by the SQLite ledger once its correction has committed). */
export function countClockStep(): void {
  stepsCorrected++;
}

/** The step between the last mark and now, or undefined when the clock did not step. */
export function clockStep(last: ClockMark | undefined, now: ClockMark): ClockStep | undefined {
  if (!last) return undefined;
  if (last.boot === now.boot) {
    const stepMs = Math.round(now.wall - (last.wall + (now.mono - last.mono)));
    return Math.abs(stepMs) > CLOCK_STEP_TOLERANCE_MS
      ? { stepMs, at: now.wall, how: 'monotonic' }
      : undefined;
  }
  const stepMs = now.wall - last.wall;
  return stepMs < -CLOCK_STEP_TOLERANCE_MS ? { stepMs, at: now.wall, how: 'reboot' } : undefined;
}
