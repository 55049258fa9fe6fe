/**
 * The options each command's action is called with, as commander parses them from the flags its
 * command file (src/cli/commands/<name>.ts) declares. They live here, not in either file, so that
 * the command (which loads its action lazily) and the action (which reads them) both import them
 * without importing each other. Types only, apart from the choices a command's flag offers.
 */
import type { Tier } from '../config/types.js';
import type { ConfigOptions, JobCommandOptions } from './options.js';

/** What `spend --report` can say became of an entry's call. */
export const SPEND_REPORTS = ['sent', 'never-sent', 'refund', 'exhausted'] as const;

export interface BackfillCommandOptions extends JobCommandOptions {
  maxUnits?: number;
  dryRun?: boolean;
}

export interface DrillCommandOptions {
  json?: boolean;
  daySeconds: number;
  store?: string;
  profile: string;
  config?: string;
  quota: number;
  behindAt: number;
  keyPrefix?: string;
  mixed?: boolean;
  reconcile?: boolean;
  svg?: string;
  keep?: boolean;
}

export interface FetchOptions extends JobCommandOptions {
  region: string[];
  dryRun?: boolean;
}

export interface HistoryOptions extends ConfigOptions {
  region?: string;
  since?: string;
  limit: string;
  credential?: string;
  json?: boolean;
}

export interface PlanOptions extends ConfigOptions {
  json?: boolean;
}

export interface MigrateOptions extends ConfigOptions {
  dryRun?: boolean;
  json?: boolean;
}

export interface ReconcileOptions extends ConfigOptions {
  json?: boolean;
}

export interface RunOptions extends JobCommandOptions {
  http?: string | boolean;
  backfill: boolean;
  decisions?: boolean;
  tokens?: string;
  allowHost?: string[];
  allowOrigin?: string[];
}

export interface SearchCommandOptions extends ConfigOptions {
  region?: string;
  limit?: number;
  json?: boolean;
}

export interface ServeOptions extends ConfigOptions {
  http: string | boolean;
  refresh: number;
  decisions?: boolean;
  tokens?: string;
  tlsCert?: string;
  tlsKey?: string;
  allowHost?: string[];
  allowOrigin?: string[];
}

export interface SimulateOptions {
  port: number;
  host: string;
  key: string[];
  profile: string;
  config?: string;
  legacyErrors?: boolean;
  quota?: number;
  bucket: Array<[string, number]>;
  seed?: string;
  dayLength?: number;
  chartPeriod?: number;
  region: string[];
  latency?: number;
  errorRate?: number;
  resetRate?: number;
  log?: boolean;
}

export interface SpendOptions extends ConfigOptions {
  cost?: number;
  method?: string;
  bucket?: string;
  entry?: string;
  report?: (typeof SPEND_REPORTS)[number];
  until?: string;
  tier: Tier;
  tag?: string;
  json?: boolean;
}

export interface StatusOptions extends ConfigOptions {
  json?: boolean;
  credential?: string;
}

export interface UnblockOptions extends ConfigOptions {
  json?: boolean;
}
