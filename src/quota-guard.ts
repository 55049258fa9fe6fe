/**
 * `openQuotaGuard(config)`: the one place the ledger, the guard and the run history are put
 * together — for a Node job, and for every command, `serve`, `run` and the demo alike: the ledger
 * with the store's whole settings (key prefix, timeouts, replicas), one guard over it and the run
 * history in the same store. `subscribe(listener)` adds a listener to the guard's events after it is
 * open (metrics, a drill's tally). `close()` (or `await using`) settles what is pending and releases
 * all of it, so nothing keeps the process alive afterwards. `run(name, fn)` records a job of your own
 * in the run history. The YouTube jobs' cache and clients are the application's:
 * `openJobContext(qg)` from `quota-guard/youtube` opens them over this handle.
 */
import { join } from 'node:path';
import { dataDir } from './config/paths.js';
import type { Config, StoreConfig } from './config/types.js';
import { isQuotaGuardError, QuotaGuardError } from './errors.js';
import { createGuard, type Guard, type GuardOptions, notCharged } from './guard/guard.js';
import { DEFAULT_JOURNAL_FILE, JournalFile, type JournalFileOptions } from './guard/journal.js';
import type { ScheduledNeed } from './guard/pacing.js';
import { quotaStatus, type StatusOptions, type StatusReport } from './guard/status.js';
import type {
  Attempt,
  CallOptions,
  CallResult,
  GuardEvent,
  GuardLogger,
  SpendArgs,
  Stop,
} from './guard/types.js';
import { lazyRunHistory } from './history/lazy.js';
import { checkJobName, type RunHistory } from './history/types.js';
import type { FetchInput, GuardedFetchOptions } from './http/fetch.js';
import { openLedger } from './ledger/open.js';
import type { Ledger, OpenLedgerOptions } from './ledger/types.js';
import { defaultLogger } from './logger.js';
import { endFromStop, type JobEnd, JobRun } from './runs/job-run.js';
import type { JobResult } from './runs/types.js';

export interface OpenQuotaGuardOptions {
  /** Where the guard and the runs log (default: pino on stderr at `LOG_LEVEL`, silent when unset). */
  logger?: GuardLogger;
  /** Every decision, sleep, stop, refund and block (for metrics). Must not throw. */
  onEvent?: (event: GuardEvent) => void;
  /** What the schedules still need of each bucket today, for the backfill's pacing (`GuardOptions.scheduledNeed`). */
  scheduledNeed?: ScheduledNeed;
  /**
   * The guard's clock, the upstream's next reset and its day (`GuardOptions`): a drill's compressed
   * day instead of the calendar's.
   */
  clock?: Pick<GuardOptions, 'now' | 'nextReset' | 'upstreamDay'>;
  /**
   * The run history: the one in the config's store, opened at its first use (default, `true`), one
   * given (closed with the handle), or none (`false`).
   */
  history?: boolean | RunHistory;
  /**
   * Open even when a Redis store is unreachable: spends then meet the store-down policy. Default
   * false: an unreachable store is a `StoreUnavailableError` here.
   */
  allowUnreachable?: boolean;
  /** More ledger options (the store's own settings come from the config and win over none of these). */
  ledger?: Omit<OpenLedgerOptions, keyof LedgerStoreOptions>;
  /**
   * The guard's journal (docs/guard.md, "The journal"): a file path, `{ path, maxBytes }`, or
   * `false` for none. Default: `journal.jsonl` in the data directory (`$QUOTA_GUARD_DATA`, …), none
   * when the ledger is opened only to read. Its lines of this store are replayed when the handle
   * opens, after a spend the store answers, at the end of `run` and at `close()`.
   */
  journal?: false | string | JournalFileOptions;
}

export interface RunOptions {
  /** The credential the run spends (default: the config's first). */
  credential?: string;
  /** Aborting cuts a wait in the guard short; the run ends `aborted`. */
  signal?: AbortSignal;
}

/** What a job of your own gets from `qg.run`: its guarded calls are counted in the run. */
export interface RunHandle {
  readonly name: string;
  readonly credential: string;
  readonly signal?: AbortSignal;
  /** Count what the run fetched (shown by `history`): pages and items. */
  pages: number;
  items: number;
  /** Labels of the run (`{ region: 'US' }`): names and values the history keeps with it. */
  labels: Record<string, string>;
  /**
   * `guard.call` on the run's credential (unless `args` names another): the spend, the request,
   * the refund or block; the units are counted in the run, and a `Stop` ends it as `stopped`.
   */
  call<T>(
    args: Omit<SpendArgs, 'credential'> & { credential?: string },
    request: (attempt: Attempt) => Promise<T>,
    options?: CallOptions,
  ): Promise<CallResult<T>>;
  /** `guardedFetch` on the run's credential, counted in the run like `call`. */
  fetch(
    args: Omit<SpendArgs, 'credential'> & { credential?: string },
    input: FetchInput,
    init?: RequestInit,
    options?: GuardedFetchOptions,
  ): Promise<CallResult<Response>>;
}

/** A finished run of your own: its history record, and what `fn` returned when it returned. */
export type RunOutcome<T> = JobResult & { value?: T };

export interface QuotaGuard extends AsyncDisposable {
  readonly config: Config;
  /**
   * Listen to every guard event from now on (metrics, a drill's tally), besides `onEvent`; returns
   * the function that stops listening. A listener must not throw.
   */
  subscribe(listener: (event: GuardEvent) => void): () => void;
  readonly ledger: Ledger;
  readonly guard: Guard;
  readonly logger: GuardLogger;
  /** The run history in the ledger's store (opened at first use); absent with `history: false`. */
  readonly history?: RunHistory;
  /**
   * `fetch(input, init)` spent from `args`' budget (`guardedFetch`): a `Stop` when the budget, a
   * block or the upstream says stop; a refund when the connection never opened.
   */
  fetch(
    args: SpendArgs,
    input: FetchInput,
    init?: RequestInit,
    options?: GuardedFetchOptions,
  ): Promise<CallResult<Response>>;
  /** What `quota-guard status --json` prints, read from this ledger. */
  status(options?: StatusOptions): Promise<StatusReport>;
  /**
   * Run a job of your own under `name` (e.g. `ingest:comments`) and record it in the run history
   * like the CLI's runs. Errors that are quota-guard's end the run as a value; any other error is
   * recorded as `failed` and rethrown.
   */
  run<T>(name: string, fn: (run: RunHandle) => Promise<T>, options?: RunOptions): Promise<RunOutcome<T>>;
  /** Settle what is pending (one command timeout at most), then close the history and the ledger. */
  close(): Promise<void>;
}

type LedgerStoreOptions = Pick<
  OpenLedgerOptions,
  'keyPrefix' | 'commandTimeoutMs' | 'connectTimeoutMs' | 'waitReplicas' | 'waitTimeoutMs'
>;

/** The ledger options a config's store settings mean (all of them: a dropped prefix splits the budget). */
export function ledgerOptionsOf(s: StoreConfig): LedgerStoreOptions {
  return {
    ...(s.keyPrefix !== undefined ? { keyPrefix: s.keyPrefix } : {}),
    ...(s.commandTimeoutMs !== undefined ? { commandTimeoutMs: s.commandTimeoutMs } : {}),
    ...(s.connectTimeoutMs !== undefined ? { connectTimeoutMs: s.connectTimeoutMs } : {}),
    ...(s.waitReplicas !== undefined ? { waitReplicas: s.waitReplicas } : {}),
    ...(s.waitTimeoutMs !== undefined ? { waitTimeoutMs: s.waitTimeoutMs } : {}),
  };
}

export async function openQuotaGuard(
  config: Config,
  options: OpenQuotaGuardOptions = {},
): Promise<QuotaGuard> {
  const logger = options.logger ?? defaultLogger();
  const ledger = await openLedger(config.store.url, {
    ...options.ledger,
    ...ledgerOptionsOf(config.store),
    ...(options.allowUnreachable ? { allowUnreachable: true } : {}),
  });
  const history =
    options.history === false
      ? undefined
      : options.history === true || options.history === undefined
        ? lazyRunHistory(config.store)
        : options.history;
  const listeners = new Set<(event: GuardEvent) => void>();
  if (options.onEvent) listeners.add(options.onEvent);
  const readOnly = options.ledger?.create === false && options.ledger.writes !== true;
  const journal = journalOf(options.journal, readOnly);
  let guard: Guard;
  try {
    guard = createGuard({
      ...(journal ? { journal } : {}),
      config,
      ledger,
      logger,
      onEvent: (e) => {
        for (const listener of listeners) listener(e);
      },
      ...(options.scheduledNeed ? { scheduledNeed: options.scheduledNeed } : {}),
      ...(options.clock?.now ? { now: options.clock.now } : {}),
      ...(options.clock?.nextReset ? { nextReset: options.clock.nextReset } : {}),
      ...(options.clock?.upstreamDay ? { upstreamDay: options.clock.upstreamDay } : {}),
    });
  } catch (e) {
    await history?.close();
    await ledger.close();
    throw e;
  }
  // Lines an earlier process left go in as soon as the store answers (not awaited: a store that is
  // away delays nothing; `close` waits for the pass).
  if (journal && journal.size() > 0) {
    void guard
      .replayJournal()
      .catch((e) => logger.warn({ error: (e as Error).message }, 'journal not replayed'));
  }
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      try {
        // Spends whose answer never came get one command timeout to be settled; none otherwise.
        if (guard.stats().unsettled > 0) await guard.settlePending(config.store.commandTimeoutMs ?? 1000);
        // What the journal holds goes in while the store answers; the rest waits for the next run.
        if (journal)
          await guard
            .replayJournal()
            .catch((e) => logger.warn({ error: (e as Error).message }, 'journal not replayed'));
      } finally {
        try {
          await history?.close();
        } finally {
          await ledger.close();
        }
      }
    })();
    return closing;
  };
  const runCtx = { config, guard, logger, ...(history ? { history } : {}) };
  return {
    config,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    ledger,
    guard,
    logger,
    ...(history ? { history } : {}),
    fetch: async (args, input, init, o) => (await loadFetch())(guard, args, input, init, o),
    status: (o) => quotaStatus(config, ledger, o),
    run: (name, fn, o = {}) => runOwnJob(runCtx, name, fn, o),
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** The journal a handle keeps (see `OpenQuotaGuardOptions.journal`). */
function journalOf(option: OpenQuotaGuardOptions['journal'], readOnly: boolean): JournalFile | undefined {
  if (option === false || (readOnly && option === undefined)) return undefined;
  if (typeof option === 'string') return new JournalFile({ path: option });
  if (option) return new JournalFile(option);
  return new JournalFile({ path: join(dataDir(process.env).path, DEFAULT_JOURNAL_FILE) });
}

/** The fetch wrapper (and Google's error model under it) is loaded by the first guarded fetch. */
async function loadFetch() {
  return (await import('./http/fetch.js')).guardedFetch;
}

async function runOwnJob<T>(
  ctx: { config: Config; guard: Guard; logger: GuardLogger; history?: RunHistory },
  name: string,
  fn: (run: RunHandle) => Promise<T>,
  options: RunOptions,
): Promise<RunOutcome<T>> {
  checkJobName(name);
  const credential = ctx.config.credential(
    options.credential ?? ctx.config.credentials[0]?.id ?? 'default',
  ).id;
  const run = new JobRun(ctx, name, credential, options.signal);
  let stop: Stop | undefined;
  let value: T | undefined;
  let bug: { error: unknown } | undefined;
  const handle: RunHandle = {
    name,
    credential,
    ...(options.signal ? { signal: options.signal } : {}),
    pages: 0,
    items: 0,
    labels: {},
    async call(args, request, callOptions = {}) {
      const r = await ctx.guard.call(
        { ...args, credential: args.credential ?? credential },
        async (attempt) => {
          run.units += attempt.spend.cost;
          const failOpen = attempt.spend.reason === 'fail-open';
          const journalled = failOpen && attempt.spend.journal !== undefined;
          if (failOpen) run.failOpenUnits += attempt.spend.cost;
          if (journalled) run.journalledUnits += attempt.spend.cost;
          try {
            return await request(attempt);
          } catch (e) {
            if (notCharged(e)) {
              run.units -= attempt.spend.cost;
              if (failOpen) run.failOpenUnits -= attempt.spend.cost;
              if (journalled) run.journalledUnits -= attempt.spend.cost;
            }
            throw e;
          }
        },
        { ...callOptions, ...(options.signal ? { signal: options.signal } : {}) },
      );
      if (!r.ok) stop ??= r;
      return r;
    },
    async fetch(args, input, init, fetchOptions) {
      const r = await (await loadFetch())(
        { call: (a, request, o) => handle.call(a, request, o), report: (s, o) => ctx.guard.report(s, o) },
        { ...args, credential: args.credential ?? credential },
        input,
        init,
        fetchOptions,
      );
      if (!r.ok) stop ??= r;
      return r;
    },
  };
  const result = await run.guarded(async (): Promise<JobEnd | undefined> => {
    try {
      value = await fn(handle);
    } catch (e) {
      if (isQuotaGuardError(e)) throw e;
      // Someone else's error: recorded as a failed run, then rethrown to the caller.
      bug = { error: e };
      const message = e instanceof Error ? e.message : String(e);
      return { outcome: 'failed', reason: message, error: new QuotaGuardError('QG_INTERNAL', message) };
    } finally {
      run.pages = handle.pages;
      run.items = handle.items;
      run.labels = { ...handle.labels };
    }
    return stop ? endFromStop(stop) : undefined;
  });
  // Spends the run journalled go into the ledger now if the store answers again.
  if (ctx.guard.journal) {
    await ctx.guard
      .replayJournal()
      .catch((e) => ctx.logger.warn({ error: (e as Error).message }, 'journal not replayed'));
  }
  if (bug) throw bug.error;
  return { ...result, ...(value !== undefined ? { value } : {}) };
}
