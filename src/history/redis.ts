/**
 * The run history on Redis: one capped stream of run summaries per credential (XADD … MAXLEN ~, so
 * trimming costs nothing per run) and a hash of each region's last success, both under the
 * credential's hash tag, so they live in its Cluster slot and one script call (lua/record-run.lua)
 * writes them all.
 *
 *   qg:{default}:runs           the stream (entry id: the server's time when the run was recorded)
 *   qg:{default}:runs:success   region → epoch ms of its last run that was done
 *   qg:{default}:runs:totals    `<job>|<outcome>|runs` and `…|units`: every run ever recorded, counted
 *   qg:{default}:runs:id:<id>   a run id a client chose (RunOnce): `<the run>|<request>`, as a
 *                               spend's entry is remembered, for RUN_ID_MEMORY_MS
 */
import { credentialKeyPrefix } from '../guard/keys.js';
import { LedgerCode } from '../ledger/codes.js';
import { type LedgerScripts, registerScripts } from '../ledger/scripts.js';
import {
  checkRedisFormat,
  openRedisConnection,
  type RedisConnection,
  type RedisConnectOptions,
  type RedisKind,
} from '../redis/index.js';
import type { JobOutcome } from './types.js';
import {
  DEFAULT_HISTORY_LIMIT,
  type HistoryQuery,
  INDEXED_LABEL,
  jobKind,
  MAX_RUNS_PER_CREDENTIAL,
  newestFirst,
  parseRememberedRun,
  type RecordedRun,
  RUN_ID_MEMORY_MS,
  type RunHistory,
  type RunOnce,
  type RunSummary,
  type RunTotal,
  rememberRun,
  runIdConflict,
  runIdKey,
  storableLabels,
  unreadableRunKey,
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

/**
 * A run's stream fields, as the previous release writes and reads them (its `region` label as
 * `region`, its items as `videos`), and every label as `labels` (JSON), a field that release skips.
 */
function toFields(r: RunSummary): string[] {
  const labels = storableLabels(r.labels);
  return [
    'job',
    r.job,
    'region',
    labels[INDEXED_LABEL] ?? '',
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
    String(r.items),
    'reason',
    r.reason ?? '',
    'used',
    JSON.stringify(r.used),
    ...(r.client !== undefined ? ['client', r.client] : []),
    ...(Object.keys(labels).length > 0 ? ['labels', JSON.stringify(labels)] : []),
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
  let labels: Record<string, string> = {};
  try {
    labels = storableLabels(JSON.parse(f['labels'] ?? '{}') as Record<string, string>);
  } catch {
    // A damaged field keeps the run's other fields.
  }
  if (f['region']) labels[INDEXED_LABEL] = f['region'];
  return {
    credential,
    job: f['job'] ?? '',
    labels,
    startedAt: Number(f['started']),
    finishedAt: Number(f['finished']),
    outcome: (f['outcome'] ?? 'failed') as JobOutcome,
    pages: Number(f['pages'] ?? 0),
    units: Number(f['units'] ?? 0),
    items: Number(f['videos'] ?? 0),
    reason: f['reason'] || null,
    used,
    ...(f['client'] ? { client: f['client'] } : {}),
  };
}

export async function openRedisHistory(
  kind: RedisKind,
  url: string,
  o: RedisConnectOptions & { keyPrefix?: string; maxRuns?: number },
): Promise<RunHistory> {
  const conn = await openRedisConnection(kind, url, o);
  try {
    // A store of a newer format is refused here too; the format key is the ledger's to write.
    await checkRedisFormat(conn, o.keyPrefix ?? '', {
      writes: false,
      ...(o.allowUnreachable ? { allowUnreachable: true } : {}),
    });
  } catch (e) {
    await conn.close();
    throw e;
  }
  return new RedisHistory(conn, o.keyPrefix ?? '', o.maxRuns ?? MAX_RUNS_PER_CREDENTIAL);
}

/** JSON of a run without `|` (escaped as \u007c, which reads back the same): the id key's separator. */
function rememberedRun(r: RunSummary): string {
  return rememberRun(r).replaceAll('|', '\\u007c');
}

/** The run history on a connected Redis or Cluster: a stream, a success hash and a totals hash per credential. */
class RedisHistory implements RunHistory {
  readonly #conn: RedisConnection;
  readonly #scripts: LedgerScripts;
  readonly #prefix: string;
  readonly #maxRuns: number;

  constructor(conn: RedisConnection, prefix: string, maxRuns: number) {
    this.#conn = conn;
    // The history's keys are prefixed here, not by the scripts.
    this.#scripts = registerScripts(conn.client);
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
        if (q.region !== undefined && r.labels[INDEXED_LABEL] !== q.region) continue;
        if (q.job !== undefined && r.job !== q.job) continue;
        if (q.since !== undefined && r.startedAt < q.since) continue;
        out.push(r);
        if (out.length >= limit) return out;
      }
      if (page.length < PAGE) return out;
      max = `(${page[page.length - 1]![0]}`;
    }
  }

  async record(r: RunSummary, once?: RunOnce): Promise<RecordedRun> {
    const key = this.#prefix + runsKey(r.credential);
    const idKey = once && this.#prefix + runIdKey(r.credential, once.id);
    const reply = await this.#conn.call('run history record', () =>
      this.#scripts.recordRun(
        [key, `${key}:success`, `${key}:totals`, ...(idKey !== undefined ? [idKey] : [])],
        [
          this.#maxRuns,
          // Like every ledger key, these expire: a credential that runs nothing for HISTORY_TTL_MS loses them.
          HISTORY_TTL_MS,
          r.outcome === 'done' ? (storableLabels(r.labels)[INDEXED_LABEL] ?? '') : '',
          r.finishedAt,
          `${jobKind(r.job)}|${r.outcome}`,
          r.units,
          once?.request ?? '',
          RUN_ID_MEMORY_MS,
          once ? rememberedRun(r) : '',
          ...toFields(r),
        ],
      ),
    );
    if ('recorded' in reply) return { run: r, replayed: false };
    if ('remembered' in reply) return { run: parseRememberedRun(reply.remembered, idKey!), replayed: true };
    if (reply.code === LedgerCode.EntryConflict) throw runIdConflict(once!.id);
    throw unreadableRunKey(idKey ?? key);
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
