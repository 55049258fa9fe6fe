/**
 * The YouTube application's config part: its schema (schema.ts) and its resolver (resolver.ts),
 * registered with the core when this module is imported (by `quota-guard/youtube`, the CLI and
 * the jobs), so `loadConfig` and `parseConfig` read its keys with the core's in one pass.
 * `loadYouTubeConfig` and `parseYouTubeConfig` read a config with it and give the typed view.
 */
import {
  type LoadConfigOptions,
  loadConfig,
  type ParseConfigOptions,
  parseConfig,
} from '../../config/load.js';
import { type ConfigPart, registerConfigPart } from '../../config/parts.js';
import { youtubeConfig, youtubeResolver } from './resolver.js';
import { type YouTubeShape, youtubeShape } from './schema.js';
import type { YouTubeConfig } from './types.js';

/** The application's part: pass it in `parts`, or rely on its registration. */
export const youtubeConfigPart: ConfigPart<YouTubeShape, object> = {
  ...youtubeResolver,
  shape: youtubeShape,
};

registerConfigPart(youtubeConfigPart);

/** The parts a YouTube config is read with unless told: the registered ones, this one among them. */
function withPart(parts: ParseConfigOptions['parts']): { parts: NonNullable<ParseConfigOptions['parts']> } {
  const given = parts ?? [youtubeConfigPart];
  return {
    parts: given.some((p) => p.name === youtubeConfigPart.name) ? given : [...given, youtubeConfigPart],
  };
}

/** `loadConfig` with the application's part: its typed view. */
export function loadYouTubeConfig(options: LoadConfigOptions = {}): YouTubeConfig {
  return youtubeConfig(loadConfig({ ...options, ...withPart(options.parts) }));
}

/** `parseConfig` with the application's part: its typed view. */
export function parseYouTubeConfig(raw: unknown, options: ParseConfigOptions = {}): YouTubeConfig {
  return youtubeConfig(parseConfig(raw, { ...options, ...withPart(options.parts) }));
}
