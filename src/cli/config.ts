/**
 * The config a command runs with: the file from `--config`, else `QUOTA_GUARD_CONFIG`, else the
 * built-in defaults, read with the core's part and the YouTube application's. On the defaults, the
 * bundled CLI starts from what the schema returned for them when it was built (config/validated.ts),
 * so a command loads zod, builds the whole schema and the YAML parser only when there is a file to
 * read. Loaded by the commands' actions, not at start.
 */
import { CONFIG_ENV } from '../config/defaults.js';
import type { Env } from '../config/types.js';
import { embeddedDefaults, resolveValidated } from '../config/validated.js';
import { youtubeConfig, youtubeResolver } from '../youtube/config/resolver.js';
import type { YouTubeConfig } from '../youtube/config/types.js';

export async function loadCliConfig(
  file: string | undefined,
  env: Env = process.env,
): Promise<YouTubeConfig> {
  const defaults = file || env[CONFIG_ENV] ? undefined : embeddedDefaults();
  if (defaults !== undefined)
    return youtubeConfig(resolveValidated(defaults, { env, parts: [youtubeResolver] }));
  const { loadYouTubeConfig } = await import('../youtube/config/part.js');
  return loadYouTubeConfig({ ...(file !== undefined ? { file } : {}), env });
}
