/**
 * A JSON log line as a person reads it on a terminal: `14:05:09 WARN bucket blocked · credential=…`.
 * JSON stays the format for cron, log files and `--json`; `LOG_FORMAT` chooses (see log-level.ts).
 *
 * Written here rather than with pino-pretty: the line wanted is short and ours — the time, the
 * level when it is not info, the job, the message, then the other fields as `key=value`, an info
 * line cut at the terminal's width and a warning wrapped whole; a field the message already says, a
 * zero and a figure another field gives (`retryAfterMs` beside `resumeAt`) left out — which pino-pretty would reach only
 * through a message-format function doing all of it, for a dozen more dependencies in every install.
 */
import { terminalText } from '../terminal-text.js';
import { wrap } from './render/format.js';

const LEVELS: Record<number, string> = { 10: 'trace', 20: 'debug', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** Said by the line's other parts, or the same on every line. */
const SKIP = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg', 'job', 'retryAfterMs']);

function value(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  if (v !== null && typeof v === 'object' && typeof (v as { message?: unknown }).message === 'string')
    return JSON.stringify((v as { message: string }).message);
  return JSON.stringify(v);
}

function hhmmss(ms: number): string {
  const d = new Date(ms);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

/** One JSON line (pino's) as one human line within `width` columns, `\n`-terminated. */
export function humanLogLine(line: string, width: number): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  const level = typeof o['level'] === 'number' ? o['level'] : 30;
  const job = typeof o['job'] === 'string' ? o['job'] : '';
  const msg = typeof o['msg'] === 'string' ? o['msg'] : '';
  const said = `${job} ${msg}`;
  const fields = Object.entries(o)
    .filter(([k, v]) => !SKIP.has(k) && v !== null && v !== undefined && v !== 0)
    // What the job or the message says already (`trending:US`, `default/units`, a resume time).
    .filter(([, v]) => !((typeof v === 'string' || typeof v === 'number') && said.includes(String(v))))
    .map(([k, v]) => `${k}=${value(v)}`);
  const head = [
    typeof o['time'] === 'number' ? hhmmss(o['time']) : '',
    LEVELS[level] ?? '',
    job && !msg.startsWith(job) ? job : '',
    msg,
  ]
    .filter(Boolean)
    .join(' ');
  const text = terminalText(fields.length ? `${head} · ${fields.join(' ')}` : head);
  const chars = [...text];
  if (chars.length <= width) return `${text}\n`;
  // An info line is one row (the rest is in LOG_FORMAT=json); a warning is read whole.
  if (level < 40) return `${chars.slice(0, width - 1).join('')}…\n`;
  return `${wrap(text, width, '', '  ')}\n`;
}
