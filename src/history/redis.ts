/**
 * The run history on Redis: one capped stream of run summaries per credential (XADD … MAXLEN ~, so
 * trimming costs nothing per run) and a hash of each region's last success, both under the
 * credential's hash tag, so they live in its Cluster slot and one MULTI writes both.
 *
 *   qg:{default}:runs           the stream (entry id: the server's time when the run was recorded)
 *   qg:{default}:runs:success   region → epoch ms of its last run that was done
 *   qg:{default}:runs:totals    `<job>|<outcome>|runs` and `…|units`: every run ever recorded, counted
 */
import { credentialKeyPrefix } from '../guard/keys.js';
import {
  openRedisConnection,
  type RedisConnection,
  type RedisConnectOptions,
  type RedisKind,
} from '../redis/index.js';
import type { JobOutcome } from './types.js';
import {
  DEFAULT_HISTORY_LIMIT,
  type HistoryQuery,
  jobKind,
  MAX_RUNS_PER_CREDENTIAL,
  newestFirst,
  type RunHistory,
  type RunSummary,
  type RunTotal,
} from './types.js';

/** A credential's history keys expire this long after its last recorded run (every key in the store expires). */
export const HISTORY_TTL_MS = 90 * 86_400_000;

/** Entries read per round trip while filtering. */
const PAGE = 500;
/** Stream ids are the Redis server's clock and `since` the host's: read this much earlier, then filter exactly. */
const CLOCK_SLACK_MS = 60_000;

export function runsKey(credential: string): string {
  return `${credentialKeyPrefix(credential)}:runs`;
}

function toFields(r: RunSummary): string[] {
  return [
    'job',
    r.job,
    'region',
    r.region ?? '',
    'started',
    String(r.startedAt),
    'finished',
    String(r.finishedAt),
    'outcome',
    r.outcome,
    'pages',
    String(r.pages),
    'units',
    String(r.units),
    'videos',
    String(r.videos),
    'reason',
    r.reason ?? '',
    'used',
    JSON.stringify(r.used),
  ];
}

function fromFields(credential: string, fields: string[]): RunSummary {
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
  let used: Record<string, number> = {};
  try {
    used = JSON.parse(f['used'] ?? '{}') as Record<string, number>;
  } catch {
    // A damaged entry keeps its other fields.
  }
  return {
    credential,
    job: f['job'] ?? '',
    region: f['region'] || null,
    startedAt: Number(f['started']),
    finishedAt: Number(f['finished']),
    outcome: (f['outcome'] ?? 'failed') as JobOutcome,
    pages: Number(f['pages'] ?? 0),
    units: Number(f['units'] ?? 0),
    videos: Number(f['videos'] ?? 0),
    reason: f['reason'] || null,
    used,
  };
}

export async function openRedisHistory(
  kind: RedisKind,
  url: string,
  o: RedisConnectOptions & { keyPrefix?: string; maxRuns?: number },
): Promise<RunHistory> {
  const conn = await openRedisConnection(kind, url, o);
  return new RedisHistory(conn, o.keyPrefix ?? '', o.maxRuns ?? MAX_RUNS_PER_CREDENTIAL);
}

/** The run history on a connected Redis or Cluster: a stream, a success hash and a totals hash per credential. */
class RedisHistory implements RunHistory {
  readonly #conn: RedisConnection;
  readonly #prefix: string;
  readonly #maxRuns: number;

  constructor(conn: RedisConnection, prefix: string, maxRuns: number) {
    this.#conn = conn;
    this.#prefix = prefix;
    this.#maxRuns = maxRuns;
  }

  async #listOne(credential: string, q: HistoryQuery, limit: number): Promise<RunSummary[]> {
    const key = this.#prefix + runsKey(credential);
    const min = q.since !== undefined ? String(Math.max(0, q.since - CLOCK_SLACK_MS)) : '-';
    const out: RunSummary[] = [];
    let max = '+';
    for (;;) {
      const page = await this.#conn.client.xrevrange(key, max, min, 'COUNT', PAGE);
      for (const [, fields] of page) {
        const r = fromFields(credential, fields);
        if (q.region !== undefined && r.region !== q.region) continue;
        if (q.since !== undefined && r.startedAt < q.since) continue;
        out.push(r);
        if (out.length >= limit) return out;
      }
      if (page.length < PAGE) return out;
      max = `(${page[page.length - 1]![0]}`;
    }
  }

  async record(r: RunSummary): Promise<void> {
    const key = this.#prefix + runsKey(r.credential);
    await this.#conn.call('run history record', async () => {
      const m = this.#conn.client
        .multi()
        .xadd(key, 'MAXLEN', '~', String(this.#maxRuns), '*', ...toFields(r));
      if (r.outcome === 'done' && r.region !== null) m.hset(`${key}:success`, r.region, String(r.finishedAt));
      const field = `${jobKind(r.job)}|${r.outcome}`;
      m.hincrby(`${key}:totals`, `${field}|runs`, 1).hincrby(`${key}:totals`, `${field}|units`, r.units);
      // Like every ledger key, these expire: a credential that runs nothing for HISTORY_TTL_MS loses them.
      for (const k of [key, `${key}:success`, `${key}:totals`]) m.pexpire(k, HISTORY_TTL_MS);
      const replies = await m.exec();
      const failed = replies?.find(([e]) => e);
      if (failed) throw failed[0];
    });
  }

  async list(q: HistoryQuery): Promise<RunSummary[]> {
    const limit = q.limit ?? DEFAULT_HISTORY_LIMIT;
    const all = await this.#conn.call('run history list', () =>
      Promise.all(q.credentials.map((c) => this.#listOne(c, q, limit))),
    );
    return newestFirst(all.flat(), limit);
  }

  async lastSuccess(credentials: readonly string[]): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    const all = await this.#conn.call('run history lastSuccess', () =>
      Promise.all(credentials.map((c) => this.#conn.client.hgetall(`${this.#prefix + runsKey(c)}:success`))),
    );
    for (const h of all)
      for (const [region, at] of Object.entries(h)) out[region] = Math.max(out[region] ?? 0, Number(at));
    return out;
  }

  async totals(credentials: readonly string[]): Promise<RunTotal[]> {
    const all = await this.#conn.call('run history totals', () =>
      Promise.all(credentials.map((c) => this.#conn.client.hgetall(`${this.#prefix + runsKey(c)}:totals`))),
    );
    const out = new Map<string, RunTotal>();
    all.forEach((h, i) => {
      const credential = credentials[i]!;
      for (const [field, value] of Object.entries(h)) {
        const [job = '', outcome = '', what] = field.split('|');
        const id = `${credential}|${job}|${outcome}`;
        const t = out.get(id) ?? { credential, job, outcome: outcome as JobOutcome, runs: 0, units: 0 };
        if (what === 'runs') t.runs = Number(value);
        else if (what === 'units') t.units = Number(value);
        out.set(id, t);
      }
    });
    return [...out.values()].sort((a, b) =>
      `${a.credential}|${a.job}|${a.outcome}`.localeCompare(`${b.credential}|${b.job}|${b.outcome}`),
    );
  }

  close(): Promise<void> {
    return this.#conn.close();
  }
}
