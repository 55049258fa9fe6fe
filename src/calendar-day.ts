/**
 * Calendar arithmetic in the upstream's time zone (YouTube: America/Los_Angeles), daylight saving
 * included. Luxon does the zone math so that a 23- or 25-hour day is handled by the IANA database,
 * not by us. Luxon is loaded on the first call that needs it (time-libs.ts), not with this module.
 */
import type { DateTime } from 'luxon';
import { InvalidArgumentError } from './errors.js';
import { luxon } from './time-libs.js';

function inZone(nowMs: number, timeZone: string): DateTime {
  const dt = luxon().DateTime.fromMillis(nowMs, { zone: timeZone });
  if (!dt.isValid) throw new InvalidArgumentError('timeZone', `unknown time zone '${timeZone}'`);
  return dt;
}

/** The canonical IANA zone names of this Node's ICU, read when first needed. */
let intlZones: ReadonlySet<string> | undefined;

/**
 * True when `timeZone` is a zone Luxon knows (what `setZone` accepts). A canonical zone name is
 * looked up in the list Intl gives, and `UTC` (the schedules' default, which that list leaves out)
 * is Luxon's own fixed zone; anything else (an alias such as US/Pacific, `utc+2`) is asked of
 * Luxon, which builds an Intl.DateTimeFormat to find out. The first DateTimeFormat of a process
 * loads ICU's locale data, about 12 ms, and Luxon itself takes 5 ms to load: a command that does no
 * calendar arithmetic (spend on a sliding window) need not pay either to check its config.
 */
export function isValidTimeZone(timeZone: string): boolean {
  if (timeZone === 'UTC') return true;
  intlZones ??= new Set(Intl.supportedValuesOf('timeZone'));
  return intlZones.has(timeZone) || luxon().Info.normalizeZone(timeZone).isValid;
}

/** Epoch ms of the next midnight in `timeZone` strictly after `nowMs`. */
export function nextMidnight(timeZone: string, nowMs: number): number {
  return inZone(nowMs, timeZone).startOf('day').plus({ days: 1 }).toMillis();
}

/** Epoch ms of the midnight in `timeZone` that started the day containing `nowMs`. */
export function startOfDay(timeZone: string, nowMs: number): number {
  return inZone(nowMs, timeZone).startOf('day').toMillis();
}

/** The calendar day containing `nowMs` in `timeZone`, as `YYYY-MM-DD`. */
export function dayKey(timeZone: string, nowMs: number): string {
  return inZone(nowMs, timeZone).toISODate() ?? '';
}

/** Length in ms of the calendar day containing `nowMs` (23, 24 or 25 hours around DST changes). */
export function dayLengthMs(timeZone: string, nowMs: number): number {
  return nextMidnight(timeZone, nowMs) - startOfDay(timeZone, nowMs);
}
