/**
 * `--profile` of the commands that run without a config (simulate, drill): a built-in profile, or
 * one a config file defines under `profiles` (`--config FILE`; its other settings are not used).
 */
import { ConfigError } from '../errors.js';
import type { QuotaProfile } from '../profiles/profiles.js';

export async function profileFor(id: string, configFile: string | undefined): Promise<QuotaProfile> {
  const { getProfile, PROFILES } = await import('../profiles/profiles.js');
  let custom: Readonly<Record<string, QuotaProfile>> = {};
  if (configFile !== undefined) {
    const { loadConfig } = await import('../config/load.js');
    custom = loadConfig({ file: configFile }).profiles;
  }
  const profile = getProfile(id, custom);
  if (!profile) {
    const own = Object.keys(custom).filter((k) => !Object.hasOwn(PROFILES, k));
    throw new ConfigError([
      `--profile: unknown profile '${id}' (built in: ${Object.keys(PROFILES).join(', ')}; ` +
        (configFile !== undefined
          ? `${configFile} defines ${own.length ? own.join(', ') : 'none'})`
          : 'a profile of your own: define it under profiles in a config file and pass --config FILE)'),
    ]);
  }
  return profile;
}
