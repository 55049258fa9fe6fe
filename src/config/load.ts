/**
 * Reading and resolving the config: `loadConfig({ file, env })` reads YAML or JSON (the file from
 * `--config`, else `QUOTA_GUARD_CONFIG`, else the embedded defaults), validates it with the zod
 * schema, then checks every cross-reference. All problems are reported at once, one line each with
 * its path, as a ConfigError (exit code 78).
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { validateDetailed } from 'node-cron';
import YAML from 'yaml';
import type { z } from 'zod';
import { ConfigError, type ErrorCode } from '../errors.js';
import { getProfile, type MethodSpec, PROFILES, type QuotaProfile, toProfile } from '../quota/profiles.js';
import { isValidTimeZone } from '../quota/time.js';
import {
  CONFIG_ENV,
  DEFAULT_BACKFILL_HEADROOM,
  DEFAULT_RESERVE,
  DEFAULT_WINDOW,
  MAX_CONFIG_BYTES,
  STORE_ENV,
} from './defaults.js';
import { parseDuration } from './duration.js';
import { absolutePath, configDir, DEFAULT_CACHE_FILE, DEFAULT_LEDGER_FILE, dataDir } from './paths.js';
import { ISO_3166_1_ALPHA_2 } from './regions.js';
import { type Amount, configSchema, type RawConfig, type RawCredential } from './schema.js';
import { parseStoreUrl } from './store-url.js';
import type {
  BackfillPace,
  BucketConfig,
  BudgetConfig,
  Config,
  CredentialConfig,
  ExpectedSpendConfig,
  ScheduleConfig,
  StoreConfig,
  Tier,
} from './types.js';

export type Env = Record<string, string | undefined>;

export interface LoadConfigOptions {
  /** The config file (from `--config`). Falls back to `env.QUOTA_GUARD_CONFIG`, then the embedded defaults. */
  file?: string;
  /** Where `QUOTA_GUARD_CONFIG`, `REDIS_URL` and API keys are read from (default `process.env`). */
  env?: Env;
}

/** Load, validate and resolve the configuration. Throws ConfigError (exit 78) with one line per problem. */
export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const file = options.file || env[CONFIG_ENV] || undefined;
  if (!file) return parseConfig({}, { env });
  const text = readConfigFile(file);
  let raw: unknown;
  try {
    raw = YAML.parse(text);
  } catch (e) {
    const err = e as Error & { linePos?: Array<{ line: number; col: number }> };
    const pos = err.linePos?.[0];
    const where = pos ? `${file}:${pos.line}:${pos.col}` : file;
    const first = (err.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
    throw new ConfigError([`${where}: not valid YAML or JSON: ${first}`]);
  }
  return parseConfig(raw ?? {}, { env, source: file });
}

/**
 * The text of a config file, read only if it is a regular file of at most MAX_CONFIG_BYTES: a
 * device (`/dev/zero`), a FIFO or a directory is refused before it is opened, and a huge file before
 * it is read (a YAML parser takes seconds and gigabytes on megabytes of input).
 */
function readConfigFile(file: string): string {
  const fail = (why: string): never => {
    throw new ConfigError([`${file}: ${why}`]);
  };
  const tooBig = (size: number) =>
    fail(`config file is ${size.toLocaleString('en-US')} bytes; a config file may have at most 1 MiB`);
  let fd: number | undefined;
  try {
    const st = statSync(file);
    if (!st.isFile())
      fail(`not a regular file (${st.isDirectory() ? 'a directory' : 'a device, FIFO or socket'})`);
    if (st.size > MAX_CONFIG_BYTES) tooBig(st.size);
    fd = openSync(file, 'r');
    // Read one byte more than allowed, so a file that grew since the stat is caught too.
    const buf = Buffer.alloc(MAX_CONFIG_BYTES + 1);
    let n = 0;
    for (let r = 1; r > 0 && n < buf.length; n += r) r = readSync(fd, buf, n, buf.length - n, null);
    if (n > MAX_CONFIG_BYTES) tooBig(n);
    return buf.toString('utf8', 0, n);
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    return fail(
      code === 'ENOENT' ? 'config file not found' : `cannot read the config file (${code ?? 'error'})`,
    );
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export interface ParseConfigOptions {
  env?: Env;
  /** Shown before each problem (the file name). */
  source?: string;
}

/** Validate and resolve an already-parsed config object (what a config file holds). */
export function parseConfig(raw: unknown, options: ParseConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const prefix = options.source ? `${options.source}: ` : '';
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.flatMap((i) => formatIssue(i)).map((p) => prefix + p),
      'QG_CONFIG_INVALID',
    );
  }
  const problems = new Problems();
  const resolved = resolve(parsed.data, env, problems, options.source);
  if (problems.list.length) {
    throw new ConfigError(
      problems.list.map((p) => prefix + p.text),
      problems.code(),
    );
  }
  return withLookups(resolved, env, options.source);
}

// ---------------------------------------------------------------------------------------------
// Problems and paths

class Problems {
  readonly list: Array<{ text: string; code: ErrorCode }> = [];
  private seen = new Set<string>();
  add(path: string, message: string, code: ErrorCode = 'QG_CONFIG_INVALID'): void {
    const text = path ? `${path}: ${message}` : message;
    if (this.seen.has(text)) return;
    this.seen.add(text);
    this.list.push({ text, code });
  }
  /** One code for the whole error: the shared one, or QG_CONFIG_INVALID when they differ. */
  code(): ErrorCode {
    const codes = new Set(this.list.map((p) => p.code));
    return codes.size === 1 ? [...codes][0]! : 'QG_CONFIG_INVALID';
  }
}

/** `credentials[0].buckets["search.list"].reserve` */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (typeof seg === 'string' && /^[A-Za-z_$][\w$]*$/.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(String(seg))}]`;
  }
  return out;
}

function formatIssue(issue: z.core.$ZodIssue): string[] {
  const path = formatPath(issue.path);
  const at = (p: string, msg: string) => (p ? `${p}: ${msg}` : msg);
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((k) => at(formatPath([...issue.path, k]), 'unknown key'));
    case 'invalid_type':
      return [
        at(
          path,
          /received undefined$/.test(issue.message) ? 'is required' : `must be ${article(issue.expected)}`,
        ),
      ];
    case 'too_small':
      return [
        at(
          path,
          issue.origin === 'array'
            ? `must have at least ${issue.minimum} item(s)`
            : issue.origin === 'string'
              ? 'must not be empty'
              : `must be ${issue.inclusive ? '>=' : '>'} ${issue.minimum}`,
        ),
      ];
    case 'too_big':
      return [
        at(
          path,
          issue.origin === 'string'
            ? `must be at most ${issue.maximum} characters`
            : `must be <= ${issue.maximum}`,
        ),
      ];
    case 'invalid_value':
      return [at(path, `must be one of ${issue.values.map((v) => String(v)).join(', ')}`)];
    case 'invalid_union': {
      // Our unions are "number or string" inputs: report the first branch's message.
      const inner = issue.errors.flat()[0];
      return [at(path, inner && inner.code !== 'invalid_type' ? inner.message : 'has the wrong type')];
    }
    default:
      return [at(path, issue.message)];
  }
}

function article(type: string): string {
  if (type === 'int') return 'an integer';
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

// ---------------------------------------------------------------------------------------------
// Resolution

type Resolved = Omit<Config, 'credential' | 'region' | 'apiKey'>;

function resolve(raw: RawConfig, env: Env, problems: Problems, source: string | undefined): Resolved {
  const custom: Record<string, QuotaProfile> = {};
  for (const [id, data] of Object.entries(raw.profiles)) {
    if (Object.hasOwn(PROFILES, id))
      problems.add(formatPath(['profiles', id]), `'${id}' is a built-in profile; give yours another id`);
    else custom[id] = toProfile(id, data);
  }
  const profiles = { ...PROFILES, ...custom };
  const credentials = raw.credentials.flatMap((c, i) => {
    const profile = getProfile(c.profile, custom);
    if (!profile) {
      problems.add(
        `credentials[${i}].profile`,
        `unknown profile '${c.profile}' (built in: ${Object.keys(PROFILES).join(', ')}${Object.keys(custom).length ? `; in profiles: ${Object.keys(custom).join(', ')}` : ''})`,
      );
      return [];
    }
    return [resolveCredential(c, i, profile, problems)];
  });
  const seen = new Set<string>();
  raw.credentials.forEach((c, i) => {
    if (seen.has(c.id)) problems.add(`credentials[${i}].id`, `duplicate credential '${c.id}'`);
    seen.add(c.id);
  });
  resolveBudgets(raw, credentials, problems);

  const regions = [...new Set(raw.regions.map((r) => r.toUpperCase()))];
  raw.regions.forEach((r, i) => {
    if (!ISO_3166_1_ALPHA_2.has(r.toUpperCase())) {
      problems.add(`regions[${i}]`, `'${r}' is not an ISO 3166-1 region code`, 'QG_UNKNOWN_REGION');
    }
  });
  const categories: Record<string, string[]> = Object.fromEntries(regions.map((r) => [r, []]));
  for (const [key, list] of Object.entries(raw.categories)) {
    const region = key.toUpperCase();
    if (!regions.includes(region)) {
      problems.add(
        formatPath(['categories', key]),
        `region '${key}' is not in regions (${regions.join(', ')})`,
        'QG_UNKNOWN_REGION',
      );
      continue;
    }
    categories[region] = [...new Set(list.map(String))];
  }

  const schedules = {
    trending: {
      ...resolveSchedule(raw.schedules.trending, 'schedules.trending', problems),
      maxPages: raw.schedules.trending.maxPages,
    },
    backfill: resolveSchedule(raw.schedules.backfill, 'schedules.backfill', problems),
  };

  return {
    store: resolveStore(raw, env, problems, source),
    cache: {
      path:
        raw.cache.path === undefined
          ? join(dataDir(env).path, DEFAULT_CACHE_FILE)
          : absolutePath(raw.cache.path, configDir(source)),
    },
    upstream: { baseUrl: raw.upstream.baseUrl.replace(/\/+$/, ''), timeoutMs: raw.upstream.timeout },
    credentials,
    regions,
    categories,
    schedules,
    backfill: {
      minAgeMs: raw.backfill.minAge,
      pace: resolvePace(raw, credentials, problems),
      holdScheduled: raw.backfill.holdScheduled,
    },
    expected: resolveExpected(raw, credentials, problems),
    maxSleepMs: raw.maxSleep,
    storeDown: { ...raw.storeDown },
    profiles,
  };
}

function amountOf(a: Amount, quota: number): number {
  return 'units' in a ? a.units : Math.ceil((quota * a.percent) / 100);
}

function resolveCredential(
  c: RawCredential,
  i: number,
  profile: QuotaProfile,
  problems: Problems,
): CredentialConfig {
  const at = `credentials[${i}]`;
  const timeZone = c.timeZone ?? profile.timeZone;
  if (!isValidTimeZone(timeZone)) problems.add(`${at}.timeZone`, `unknown time zone '${timeZone}'`);

  for (const name of Object.keys(c.buckets)) {
    if (!(name in profile.buckets)) {
      problems.add(
        formatPath(['credentials', i, 'buckets', name]),
        `unknown bucket '${name}' (profile ${profile.id} has ${Object.keys(profile.buckets).join(', ')})`,
        'QG_UNKNOWN_BUCKET',
      );
    }
  }

  const buckets: Record<string, BucketConfig> = {};
  for (const [name, base] of Object.entries(profile.buckets)) {
    const spec = c.buckets[name] ?? {};
    const bucketAt = formatPath(['credentials', i, 'buckets', name]);
    const where = (key: 'reserve' | 'backfillHeadroom') =>
      spec[key] !== undefined ? `${bucketAt}.${key}` : `${at}.${key}`;
    const quota = spec.quota ?? base.quota;
    const window = spec.window ?? c.window ?? { kind: 'sliding', ms: parseDuration(DEFAULT_WINDOW)! };
    const reserveSpec = spec.reserve ?? c.reserve ?? { percent: Number.parseFloat(DEFAULT_RESERVE) };
    const headroomSpec = spec.backfillHeadroom ??
      c.backfillHeadroom ?? { percent: Number.parseFloat(DEFAULT_BACKFILL_HEADROOM) };
    const reserve = amountOf(reserveSpec, quota);
    const backfillHeadroom = amountOf(headroomSpec, quota);
    let ok = true;
    if (!Number.isInteger(reserve)) {
      problems.add(where('reserve'), 'must be a whole number of units');
      ok = false;
    } else if (reserve >= quota) {
      problems.add(where('reserve'), `must be less than quota (${quota})`);
      ok = false;
    }
    if (!Number.isInteger(backfillHeadroom)) {
      problems.add(where('backfillHeadroom'), 'must be a whole number of units');
      ok = false;
    } else if (ok && reserve + backfillHeadroom >= quota) {
      problems.add(where('backfillHeadroom'), `must be less than quota − reserve (${quota - reserve})`);
    }
    const pace = spec.pace ?? c.pace;
    buckets[name] = {
      id: name,
      quota,
      window,
      reserve,
      backfillHeadroom,
      ceilings: {
        scheduled: quota - reserve,
        backfill: quota - reserve - backfillHeadroom,
        manual: quota,
      },
      ...(pace ? { pace: { limit: pace.limit, windowMs: pace.window } } : {}),
    };
  }

  const methods: Record<string, MethodSpec> = {};
  for (const [m, spec] of Object.entries(profile.methods)) methods[m] = { ...spec };

  return {
    id: c.id,
    apiKeyEnv: c.apiKeyEnv,
    profile: profile.id,
    timeZone,
    defaultBucket: profile.defaultBucket,
    buckets,
    methods,
    budgets: [],
  };
}

function resolveBudgets(raw: RawConfig, credentials: CredentialConfig[], problems: Problems): void {
  const ids = new Set<string>();
  raw.budgets.forEach((b, j) => {
    const at = `budgets[${j}]`;
    if (ids.has(b.id)) problems.add(`${at}.id`, `duplicate budget '${b.id}'`);
    ids.add(b.id);
    let targets = credentials;
    if (b.credential !== undefined) {
      targets = credentials.filter((c) => c.id === b.credential);
      if (!targets.length) {
        problems.add(
          `${at}.credential`,
          `unknown credential '${b.credential}' (configured: ${credentials.map((c) => c.id).join(', ')})`,
          'QG_UNKNOWN_CREDENTIAL',
        );
      }
    }
    if (b.bucket === undefined && b.methods === undefined) {
      problems.add(at, 'set bucket, methods or both');
      return;
    }
    for (const cred of targets) {
      let bucket = b.bucket;
      if (bucket !== undefined && !(bucket in cred.buckets)) {
        problems.add(
          `${at}.bucket`,
          `unknown bucket '${bucket}' (profile ${cred.profile} has ${Object.keys(cred.buckets).join(', ')})`,
          'QG_UNKNOWN_BUCKET',
        );
        continue;
      }
      const methodBuckets = new Set<string>();
      let methodsOk = true;
      b.methods?.forEach((m, k) => {
        const spec = cred.methods[m];
        if (!spec) {
          problems.add(
            `${at}.methods[${k}]`,
            `unknown method '${m}' in profile ${cred.profile}`,
            'QG_UNKNOWN_METHOD',
          );
          methodsOk = false;
        } else if (bucket !== undefined && spec.bucket !== bucket) {
          problems.add(
            `${at}.methods[${k}]`,
            `'${m}' spends bucket '${spec.bucket}' in profile ${cred.profile}, not '${bucket}'`,
          );
          methodsOk = false;
        } else methodBuckets.add(spec.bucket);
      });
      if (!methodsOk) continue;
      if (bucket === undefined) {
        if (methodBuckets.size !== 1) {
          problems.add(
            `${at}.methods`,
            `the methods spend different buckets in profile ${cred.profile} (${[...methodBuckets].join(', ')}): set bucket or split the budget`,
          );
          continue;
        }
        bucket = [...methodBuckets][0]!;
      }
      const budget: BudgetConfig = {
        id: b.id,
        bucket,
        limit: b.limit,
        windowMs: b.window,
        tiers: (b.tiers ?? ['scheduled', 'backfill', 'manual']) as Tier[],
        ...(b.methods ? { methods: [...b.methods] } : {}),
      };
      (cred.budgets as BudgetConfig[]).push(budget);
    }
  });
}

function resolvePace(raw: RawConfig, credentials: CredentialConfig[], problems: Problems): BackfillPace {
  const pace = raw.backfill.pace;
  if (pace === 'day' || pace === 'none') return { kind: pace };
  const jobs = credentials[0];
  const budget = jobs?.budgets.find((b) => b.id === pace);
  if (!budget) {
    const ids = jobs?.budgets.map((b) => b.id) ?? [];
    problems.add(
      'backfill.pace',
      `must be day, none or the id of a budget of credential ${jobs?.id ?? '?'}${ids.length ? ` (${ids.join(', ')})` : ''}, got '${pace}'`,
    );
  } else if (!budget.tiers.includes('backfill')) {
    problems.add('backfill.pace', `budget '${pace}' does not cover the backfill tier`);
  }
  return { kind: 'budget', budget: pace };
}

function resolveExpected(
  raw: RawConfig,
  credentials: CredentialConfig[],
  problems: Problems,
): ExpectedSpendConfig[] {
  const out: ExpectedSpendConfig[] = [];
  raw.expected.forEach((e, j) => {
    const at = `expected[${j}]`;
    const cred = e.credential === undefined ? credentials[0] : credentials.find((c) => c.id === e.credential);
    if (!cred) {
      problems.add(
        `${at}.credential`,
        `unknown credential '${e.credential}' (configured: ${credentials.map((c) => c.id).join(', ')})`,
        'QG_UNKNOWN_CREDENTIAL',
      );
      return;
    }
    const spec = cred.methods[e.method];
    if (!spec) {
      problems.add(
        `${at}.method`,
        `unknown method '${e.method}' in profile ${cred.profile}`,
        'QG_UNKNOWN_METHOD',
      );
      return;
    }
    out.push({
      id: e.id ?? `${e.method}:${e.tier}`,
      credential: cred.id,
      method: e.method,
      bucket: spec.bucket,
      cost: spec.cost,
      tier: e.tier as Tier,
      callsPerDay: e.callsPerDay,
    });
  });
  return out;
}

function resolveSchedule(
  s: { cron: string; stagger: number; timeZone: string },
  at: string,
  problems: Problems,
): ScheduleConfig {
  const v = validateDetailed(s.cron);
  if (!v.valid) {
    const why = v.errors.map((e) => e.message).join('; ') || 'not a valid cron expression';
    problems.add(`${at}.cron`, `'${s.cron}': ${why}`);
  }
  if (!isValidTimeZone(s.timeZone)) problems.add(`${at}.timeZone`, `unknown time zone '${s.timeZone}'`);
  return { cron: s.cron, staggerMs: s.stagger, timeZone: s.timeZone };
}

function resolveStore(raw: RawConfig, env: Env, problems: Problems, source: string | undefined): StoreConfig {
  const opts = typeof raw.store === 'object' ? raw.store : {};
  const fileUrl = typeof raw.store === 'string' ? raw.store : raw.store?.url;
  const envUrl = env[STORE_ENV] || undefined;
  const [url, from, at] =
    fileUrl !== undefined
      ? [fileUrl, 'file' as const, typeof raw.store === 'string' ? 'store' : 'store.url']
      : envUrl !== undefined
        ? [envUrl, 'env' as const, STORE_ENV]
        : [`sqlite:${join(dataDir(env).path, DEFAULT_LEDGER_FILE)}`, 'default' as const, 'store'];
  let kind: StoreConfig['kind'] = 'sqlite';
  let absolute = url;
  try {
    const parsed = parseStoreUrl(url);
    kind = parsed.kind;
    // A relative file: from the config file's directory, or the working directory for REDIS_URL.
    if (parsed.kind === 'sqlite') {
      absolute = `sqlite:${absolutePath(parsed.path, from === 'file' ? configDir(source) : process.cwd())}`;
    }
  } catch (e) {
    problems.add(at, (e as Error).message, 'QG_STORE_URL_INVALID');
  }
  if (opts.waitReplicas && kind !== 'redis') {
    problems.add(
      'store.waitReplicas',
      'waits for Redis replicas: needs a redis://, rediss:// or redis-sentinel:// store',
    );
  }
  return {
    url: absolute,
    kind,
    from,
    ...(opts.keyPrefix !== undefined ? { keyPrefix: opts.keyPrefix } : {}),
    ...(opts.commandTimeoutMs !== undefined ? { commandTimeoutMs: opts.commandTimeoutMs } : {}),
    ...(opts.connectTimeoutMs !== undefined ? { connectTimeoutMs: opts.connectTimeoutMs } : {}),
    ...(opts.waitReplicas !== undefined ? { waitReplicas: opts.waitReplicas } : {}),
    ...(opts.waitTimeoutMs !== undefined ? { waitTimeoutMs: opts.waitTimeoutMs } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Lookups (non-enumerable, so that logging or serialising a config shows data only)

function withLookups(resolved: Resolved, env: Env, source: string | undefined): Config {
  const config = { ...(source !== undefined ? { source } : {}), ...resolved } as Config;
  const credential = (id: string): CredentialConfig => {
    const c = resolved.credentials.find((x) => x.id === id);
    if (!c) {
      throw new ConfigError(
        [`unknown credential '${id}' (configured: ${resolved.credentials.map((x) => x.id).join(', ')})`],
        'QG_UNKNOWN_CREDENTIAL',
      );
    }
    return c;
  };
  const region = (code: string): string => {
    const r = code.toUpperCase();
    if (!resolved.regions.includes(r)) {
      throw new ConfigError(
        [`unknown region '${code}' (configured: ${resolved.regions.join(', ')})`],
        'QG_UNKNOWN_REGION',
      );
    }
    return r;
  };
  const apiKey = (id: string): string => {
    const c = credential(id);
    const key = env[c.apiKeyEnv]?.trim();
    if (!key) {
      throw new ConfigError(
        [`credential '${id}' needs an API key: set the environment variable ${c.apiKeyEnv}`],
        'QG_MISSING_API_KEY',
      );
    }
    return key;
  };
  Object.defineProperties(config, {
    credential: { value: credential, enumerable: false },
    region: { value: region, enumerable: false },
    apiKey: { value: apiKey, enumerable: false },
  });
  return config;
}

/** The bucket and cost a method spends for a credential; ConfigError (QG_UNKNOWN_METHOD) otherwise. */
export function methodOf(credential: CredentialConfig, method: string): MethodSpec {
  const spec = credential.methods[method];
  if (!spec) {
    throw new ConfigError(
      [`unknown method '${method}' for credential '${credential.id}' (profile ${credential.profile})`],
      'QG_UNKNOWN_METHOD',
    );
  }
  return spec;
}

/** A credential's bucket; ConfigError (QG_UNKNOWN_BUCKET) otherwise. */
export function bucketOf(credential: CredentialConfig, bucket: string): BucketConfig {
  const b = credential.buckets[bucket];
  if (!b) {
    throw new ConfigError(
      [
        `unknown bucket '${bucket}' for credential '${credential.id}' (has ${Object.keys(credential.buckets).join(', ')})`,
      ],
      'QG_UNKNOWN_BUCKET',
    );
  }
  return b;
}
