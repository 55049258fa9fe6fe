import { bucketWindow, createGuard, type Guard } from '../../src/guard/index.js';
import { openRunHistory } from '../../src/history/index.js';
import { openLedger } from '../../src/ledger/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { openCache } from '../../src/youtube/cache/index.js';
import { parseYouTubeConfig as parseConfig } from '../../src/youtube/config/part.js';
import type { YouTubeConfig as Config } from '../../src/youtube/config/types.js';
import type { JobContext } from '../../src/youtube/job-library/index.js';
import { upstreamClients } from '../../src/youtube/job-library/upstream.js';
import { type Simulator, type SimulatorOptions, startSimulator } from '../../src/youtube/simulator/index.js';
import { type Captured, capture } from '../guard/helpers.js';
import { fileTempDir } from '../harness/temp.js';

const temp = fileTempDir('qg-jobs-');
export const tmp = temp.dir;

export const KEY_ENV = 'QG_TEST_API_KEY';

/** A fresh path under the test's temp directory. */
export function tmpPath(name: string): string {
  return temp.path(name);
}

export interface Rig extends JobContext {
  sim: Simulator;
  key: string;
  ledger: Ledger;
  guard: Guard;
  log: Captured;
  /** Closes everything the rig opened (the simulator only when the rig started it). */
  close(): Promise<void>;
}

export interface RigOptions {
  /** Raw config (store, cache and upstream are filled in unless given). */
  config?: Record<string, unknown>;
  /** A ledger URL (default: a fresh SQLite file). */
  store?: string;
  keyPrefix?: string;
  sim?: Simulator;
  simOptions?: SimulatorOptions;
  key?: string;
  /** Put no API key in the env. */
  noKey?: boolean;
  /** Record finished runs in a run history kept in the ledger's store, as the CLI does. */
  history?: boolean;
}

/** A distinctive key, so a test can grep output for it. */
export function secretKey(): string {
  return `sk-test-${Math.random().toString(36).slice(2)}-${Date.now().toString(36)}`;
}

export async function rig(options: RigOptions = {}): Promise<Rig> {
  const key = options.key ?? secretKey();
  const ownSim = options.sim === undefined;
  const sim = options.sim ?? (await startSimulator({ port: 0, ...options.simOptions }));
  const raw = options.config ?? {};
  const config: Config = parseConfig(
    {
      cache: { path: tmpPath('cache.db') },
      // Jobs tests backfill videos a trending run has just cached, whatever the time of day: no
      // pacing over the day, no units held back for the day's remaining scheduled runs.
      backfill: { minAge: 0, pace: 'none', holdScheduled: false },
      ...raw,
      upstream: { baseUrl: sim.url, timeout: '5s', ...(raw['upstream'] as object | undefined) },
      credentials: (raw['credentials'] as Array<Record<string, unknown>> | undefined)?.map((c) => ({
        apiKeyEnv: KEY_ENV,
        ...c,
      })) ?? [{ id: 'default', apiKeyEnv: KEY_ENV }],
    },
    { env: options.noKey ? {} : { [KEY_ENV]: key } },
  );
  const storeUrl = options.store ?? `sqlite:${tmpPath('ledger.db')}`;
  const ledger = await openLedger(storeUrl, {
    ...(options.keyPrefix !== undefined ? { keyPrefix: options.keyPrefix } : {}),
  });
  const log = capture();
  const guard = createGuard({ config, ledger, logger: log, onEvent: log.onEvent });
  const cache = openCache(config.cache.path);
  const upstream = upstreamClients(config);
  const history = options.history
    ? await openRunHistory({
        url: storeUrl,
        kind: ledger.kind,
        from: 'file',
        ...(options.keyPrefix !== undefined ? { keyPrefix: options.keyPrefix } : {}),
      })
    : undefined;
  return {
    config,
    guard,
    cache,
    upstream,
    ...(history !== undefined ? { history } : {}),
    logger: log,
    sim,
    key,
    ledger,
    log,
    async close() {
      await upstream.close();
      await history?.close();
      cache.close();
      await ledger.close();
      if (ownSim) await sim.close();
    },
  };
}

/** Units a bucket of a credential has spent in the ledger now. */
export async function used(
  r: Rig,
  bucket = 'units',
  credential = r.config.credentials[0]!.id,
): Promise<number> {
  const c = r.config.credential(credential);
  return (await r.ledger.peek(bucketWindow(c, c.buckets[bucket]!, Date.now()))).used;
}

/** Everything a rig logged, as one string (to grep for secrets). */
export function logText(r: Rig): string {
  return JSON.stringify(r.log.lines);
}
