/**
 * The YouTube application's part of the config, resolved: regions checked against ISO 3166-1 (each
 * with the nearest code when one is near), categories against the regions, cron expressions and
 * time zones of the schedules, the budget that paces the backfill against the core's budgets. No
 * zod here (its schema is schema.ts), so a command on the embedded defaults resolves without it.
 * `youtubeConfig(config)` is the application's typed view of a config read with this part.
 */
// Registers the application's error codes, which this module throws.
import '../errors.js';
import { join } from 'node:path';
import { checkCron, checkTimeZone } from '../../config/cron.js';
import { didYouMean, nameList, nameTable } from '../../config/names.js';
import type { PartContext, PartInput, PartResolver } from '../../config/parts.js';
import { absolutePath, configDir, DEFAULT_CACHE_FILE, dataDir } from '../../config/paths.js';
import type { Path, Problems } from '../../config/problems.js';
import { BACKFILL_TIER } from '../../config/tiers.js';
import type { Config, PacingConfig } from '../../config/types.js';
import { ConfigError } from '../../errors.js';
import { DEFAULT_BACKFILL_CRON, DEFAULT_TRENDING_CRON } from '../defaults.js';
import { ISO_3166_1_ALPHA_2 } from './regions.js';
import type { YouTubeShape } from './schema.js';
import type { BackfillPace, ScheduleConfig, YouTubeConfig, YouTubeSettings } from './types.js';

/** The part's name in `config.parts`. */
export const YOUTUBE_PART = 'youtube';

/** The top-level keys the application owns. */
export const YOUTUBE_KEYS = ['cache', 'upstream', 'regions', 'categories', 'schedules', 'backfill'] as const;

type Input = PartInput<YouTubeShape>;

/** The application's resolver: its settings, plus the pacing the guard applies to the backfill. */
export const youtubeResolver: PartResolver<Input, YouTubeSettings & { pacing: PacingConfig }> = {
  name: YOUTUBE_PART,
  keys: YOUTUBE_KEYS,
  resolve: resolveYouTube,
};

function resolveYouTube(
  raw: Input,
  ctx: PartContext,
): YouTubeSettings & { pacing: PacingConfig } & Pick<YouTubeConfig, 'region'> {
  const { problems } = ctx;
  const regions: string[] = [];
  raw.regions.forEach((r, i) => {
    if (r === undefined) return;
    const code = r.toUpperCase();
    if (!ISO_3166_1_ALPHA_2.has(code)) {
      problems.add(
        ['regions', i],
        `'${r}' is not an ISO 3166-1 region code${didYouMean(code, ISO_3166_1_ALPHA_2)}`,
        'QG_UNKNOWN_REGION',
      );
    }
    if (!regions.includes(code)) regions.push(code);
  });
  const categories = nameTable<string[]>(regions.map((r) => [r, []]));
  for (const [key, list] of Object.entries(raw.categories)) {
    const region = key.toUpperCase();
    if (!regions.includes(region)) {
      if (!problems.isBroken('region', key)) {
        problems.add(
          ['categories', key],
          `region '${key}' is not in regions (${nameList(regions)})${didYouMean(region, regions)}`,
          'QG_UNKNOWN_REGION',
        );
      }
      continue;
    }
    categories[region] = [...new Set(list.map(String))];
  }
  const schedules = {
    trending: {
      ...resolveSchedule(raw.schedules.trending, ['schedules', 'trending'], problems),
      maxPages: raw.schedules.trending.maxPages,
    },
    backfill: resolveSchedule(raw.schedules.backfill, ['schedules', 'backfill'], problems),
  };
  const pace = resolvePace(raw.backfill.pace, ctx);
  const region = (code: string): string => {
    const r = typeof code === 'string' ? code.toUpperCase() : '';
    if (!regions.includes(r)) {
      throw new ConfigError(
        [`unknown region '${String(code)}'${didYouMean(r, regions)} (configured: ${nameList(regions)})`],
        'QG_UNKNOWN_REGION',
      );
    }
    return r;
  };
  return {
    cache: {
      path:
        raw.cache.path === undefined
          ? join(dataDir(ctx.env).path, DEFAULT_CACHE_FILE)
          : absolutePath(raw.cache.path, configDir(ctx.source)),
    },
    upstream: {
      baseUrl: raw.upstream.baseUrl.replace(/\/+$/, ''),
      timeoutMs: raw.upstream.timeout,
      deadlineMs: raw.upstream.deadline,
      maxResponseBytes: raw.upstream.maxResponseBytes,
    },
    regions,
    categories,
    schedules,
    backfill: { minAgeMs: raw.backfill.minAge, pace, holdScheduled: raw.backfill.holdScheduled },
    pacing: { mode: pace, holdScheduled: raw.backfill.holdScheduled },
    region,
  };
}

function resolvePace(pace: string, { core, problems }: PartContext): BackfillPace {
  if (pace === 'day' || pace === 'none') return { kind: pace };
  const jobs = core.credentials[0];
  if (jobs === undefined) return { kind: 'budget', budget: pace };
  const budget = jobs.budgets.find((b) => b.id === pace);
  if (!budget) {
    if (!problems.isBroken('budget', pace)) {
      const ids = jobs.budgets.map((b) => b.id);
      problems.add(
        ['backfill', 'pace'],
        `must be day, none or the id of a budget of credential ${jobs.id}${ids.length ? ` (${ids.join(', ')})` : ''}, got '${pace}'${didYouMean(pace, ['day', 'none', ...ids])}`,
      );
    }
  } else if (!budget.tiers.includes(BACKFILL_TIER.id)) {
    problems.add(['backfill', 'pace'], `budget '${pace}' does not cover the backfill tier`);
  }
  return { kind: 'budget', budget: pace };
}

/**
 * The built-in schedules, which node-cron accepts (a test checks it): a config that keeps them
 * does not load node-cron to check them again.
 */
const BUILT_IN_CRONS: ReadonlySet<string> = new Set([DEFAULT_TRENDING_CRON, DEFAULT_BACKFILL_CRON]);

function resolveSchedule(
  s: { cron: string; stagger: number; timeZone: string },
  at: Path,
  problems: Problems,
): ScheduleConfig {
  checkCron(s.cron, [...at, 'cron'], problems, BUILT_IN_CRONS);
  checkTimeZone(s.timeZone, [...at, 'timeZone'], problems);
  return { cron: s.cron, staggerMs: s.stagger, timeZone: s.timeZone };
}

/** Whether `config` was read with the application's part. */
export function hasYouTubePart(config: Config): boolean {
  return config.parts.includes(YOUTUBE_PART);
}

/**
 * The application's view of a config: the same object, its part's settings typed. A config read
 * without the part (a core-only `parseConfig(raw, { parts: [] })`) is a ConfigError saying so.
 */
export function youtubeConfig(config: Config): YouTubeConfig {
  if (!hasYouTubePart(config)) {
    throw new ConfigError(
      [
        "the config was read without the YouTube application's part (regions, schedules, cache, upstream): read it after importing quota-guard/youtube, or with parts: [youtubeConfigPart]",
      ],
      'QG_CONFIG_INVALID',
    );
  }
  return config as YouTubeConfig;
}
