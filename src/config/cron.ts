/**
 * A cron expression and its time zone in a config, checked: node-cron's own words ("61 is a invalid
 * expression for minute") said in ours, field by field, and an unknown zone with the nearest known
 * one. The core checks its reconcile schedule with it, the YouTube application its jobs' schedules.
 */
import { isValidTimeZone } from '../calendar-day.js';
import { nodeCron } from '../time-libs.js';
import { didYouMean, nameTable } from './names.js';
import type { Path, Problems } from './problems.js';

/** What each cron field accepts, for the line that says which one is wrong. */
const CRON_FIELDS: Readonly<Record<string, string>> = nameTable([
  ['second', '0-59'],
  ['minute', '0-59'],
  ['hour', '0-23'],
  ['day', '1-31'],
  ['month', '1-12 or jan-dec'],
  ['weekday', '0-7 or sun-sat'],
]);
const CRON_SHAPE =
  'not a cron expression (five fields: minute hour day month weekday, or six with seconds first)';

/**
 * Check `cron` (at `at`, e.g. `schedules.trending.cron`) unless it is one of `known` (the built-in
 * schedules, which a test checks: a config that keeps them does not load node-cron to check them).
 */
export function checkCron(cron: string, at: Path, problems: Problems, known: ReadonlySet<string>): void {
  const v = known.has(cron) ? undefined : nodeCron().validateDetailed(cron);
  if (!v || v.valid) return;
  const why =
    v.errors
      .map((e: { field?: string; value?: unknown }) =>
        e.field !== undefined && Object.hasOwn(CRON_FIELDS, e.field)
          ? `the ${e.field} field '${String(e.value)}' is out of range or malformed (${CRON_FIELDS[e.field]})`
          : undefined,
      )
      .filter((w: string | undefined) => w !== undefined)
      .join('; ') || CRON_SHAPE;
  problems.add(at, `'${cron}': ${why}`);
}

/** Check a time zone (at `at`); an unknown one says the nearest IANA zone when one is near. */
export function checkTimeZone(zone: string, at: Path, problems: Problems): void {
  if (!isValidTimeZone(zone)) problems.add(at, `unknown time zone '${zone}'${nearZone(zone)}`);
}

/** ` (did you mean 'America/Los_Angeles'?)` for a misspelt IANA zone. */
export function nearZone(zone: string): string {
  const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return didYouMean(zone, zones);
}
