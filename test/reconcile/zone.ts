/**
 * An `Etc/GMT±N` zone in which it is 11 in the morning now: a day there has 11 hours behind it
 * whatever the date and the hour the tests run at, so a span of completed minutes since its
 * midnight always holds what a test spent an hour ago.
 */
export function lateMorningZone(now = Date.now()): string {
  const x = ((new Date(now).getUTCHours() - 11 + 36) % 24) - 12;
  return x === 0 ? 'Etc/GMT' : x > 0 ? `Etc/GMT+${x}` : `Etc/GMT${x}`;
}
