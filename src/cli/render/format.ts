/** Plain-text output helpers for the CLI: numbers, bars and aligned tables. */

export { formatDuration } from '../../config/duration.js';

// Made on first use: building the first NumberFormat of a process loads ICU's locale data (about
// 12 ms), which a command that prints no number (`--help`, a `spend --json`) should not pay for.
let number: Intl.NumberFormat | undefined;

/**
 * `n` the way en-US writes it (`12,345`, `0.333`). A whole number, which is nearly every number the
 * CLI prints, is grouped here, giving the same text without loading ICU (`spend` prints one
 * number and does nothing else that needs it); the rest go to Intl.NumberFormat.
 */
export function formatNumber(n: number): string {
  if (Number.isSafeInteger(n) && !Object.is(n, -0)) {
    return String(n).replace(/\B(?=(\d{3})+$)/g, ',');
  }
  number ??= new Intl.NumberFormat('en-US');
  return number.format(n);
}

/** The width a table written to `stream` has by default: no terminal and no `COLUMNS`. */
export const DEFAULT_WIDTH = 100;

/**
 * The columns output to `stream` should keep within: the terminal's when it is one, else `COLUMNS`
 * when set (a script that pipes the output can still ask for a width), else 100. Never below 40:
 * narrower than that nothing is laid out usefully, and a line wraps rather than a table.
 */
export function outputWidth(
  stream: { isTTY?: boolean; columns?: number } = process.stdout,
  env: NodeJS.ProcessEnv = process.env,
): number {
  const fromEnv = Number(env['COLUMNS']);
  const w =
    stream.isTTY === true && typeof stream.columns === 'number' && stream.columns > 0
      ? stream.columns
      : Number.isInteger(fromEnv) && fromEnv > 0
        ? fromEnv
        : DEFAULT_WIDTH;
  return Math.max(40, w);
}

/** The widest line of `text`, in characters. */
export function widest(text: string): number {
  return Math.max(0, ...text.split('\n').map((l) => [...l].length));
}

/** `1 unit`, `1,232 units`: a count and its noun, singular for one. */
export function count(n: number, noun: string): string {
  return `${formatNumber(n)} ${noun}${n === 1 ? '' : 's'}`;
}

/** `██████░░░░` for `fraction` of `width` cells (clamped to 0..1). */
export function bar(fraction: number, width = 20): string {
  const f = Number.isFinite(fraction) ? Math.min(1, Math.max(0, fraction)) : 0;
  const full = Math.round(f * width);
  return '█'.repeat(full) + '░'.repeat(width - full);
}

/**
 * Left-aligned text columns, right-aligned numeric ones (a sign may lead, a trailing `*` marks a
 * note), two spaces apart.
 */
export function table(rows: string[][], indent = ''): string {
  const widths: number[] = [];
  const numeric: boolean[] = [];
  rows.forEach((row, r) => {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, [...cell].length);
      if (r > 0 && cell !== '' && cell !== '-')
        numeric[i] = (numeric[i] ?? true) && /^[+-]?[\d,.]+\*?$/.test(cell);
    });
  });
  return rows
    .map(
      (row) =>
        indent +
        row
          .map((cell, i) => {
            const pad = ' '.repeat((widths[i] ?? 0) - [...cell].length);
            return numeric[i] ? pad + cell : cell + pad;
          })
          .join('  ')
          .trimEnd(),
    )
    .join('\n');
}

/** `US 400, GB 300` — largest first. */
export function breakdown(units: Record<string, number>, limit = 10): string {
  const entries = Object.entries(units).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const shown = entries.slice(0, limit).map(([k, v]) => `${k} ${formatNumber(v)}`);
  if (entries.length > limit) shown.push(`… ${entries.length - limit} more`);
  return shown.join(', ');
}

/** Words wrapped at `width` columns; every line starts with `indent`, the ones after the first with `hang` more. */
export function wrap(text: string, width: number, indent = '', hang = '  '): string {
  const lines: string[] = [];
  let line = indent;
  let fresh = true;
  // A word longer than a line (a path, a URL) is cut into pieces that fit: no line is wider than `width`.
  const room = Math.max(1, width - [...indent].length - [...hang].length);
  const words = text
    .split(/\s+/)
    .filter(Boolean)
    .flatMap((w) => {
      const chars = [...w];
      if (chars.length <= room) return [w];
      const pieces: string[] = [];
      for (let i = 0; i < chars.length; i += room) pieces.push(chars.slice(i, i + room).join(''));
      return pieces;
    });
  for (const word of words) {
    const len = [...line].length + (fresh ? 0 : 1) + [...word].length;
    if (!fresh && len > width) {
      lines.push(line);
      line = indent + hang + word;
    } else line += (fresh ? '' : ' ') + word;
    fresh = false;
  }
  lines.push(line);
  return lines.join('\n');
}

/**
 * `table(rows)` kept within `width`: as it is when it fits; else with its last column (free text:
 * a detail, a reason) wrapped under itself, when that leaves it 20 columns; else each row on lines
 * of its own, its cells two spaces apart and wrapped with a hanging indent.
 */
export function fitTable(rows: string[][], width: number): string {
  const whole = table(rows);
  if (widest(whole) <= width) return whole;
  const last = Math.max(0, ...rows.map((r) => r.length)) - 1;
  const head = table(rows.map((r) => [...r.slice(0, last), '']));
  const start = widest(head) + 2;
  if (last > 0 && width - start >= 20) {
    const pad = ' '.repeat(start);
    return head
      .split('\n')
      .map((l, i) => {
        const cell = rows[i]?.[last] ?? '';
        if (cell === '') return l.trimEnd();
        const lines = wrap(cell, width - start, '', '').split('\n');
        return [`${l.padEnd(start)}${lines[0]}`, ...lines.slice(1).map((x) => pad + x)].join('\n');
      })
      .join('\n');
  }
  const indent = /^\s*/.exec(rows[0]?.[0] ?? '')?.[0] ?? '';
  return rows
    .map((r) =>
      wrap(
        r
          .map((c) => c.trim())
          .filter(Boolean)
          .join('  '),
        width,
        indent,
        '  ',
      ),
    )
    .join('\n');
}
