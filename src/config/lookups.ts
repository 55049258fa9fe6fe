/**
 * The lookups of a resolved config: `credential(id)` and `apiKey(id)` on the config itself
 * (non-enumerable, so that logging or serialising a config shows data only), and a credential's
 * method or bucket by name. Each throws a ConfigError naming what is configured and the nearest
 * name. Names are looked up as data (names.ts): `constructor` is an unknown credential like any other.
 */
import { ConfigError } from '../errors.js';
import type { MethodSpec } from '../profiles/profiles.js';
import { byName, didYouMean, nameList, nameTable } from './names.js';
import type { CoreSettings } from './parts.js';
import type { BucketConfig, Config, CredentialConfig, Env } from './types.js';

/**
 * The config object: the core's settings, each part's (functions as non-enumerable lookups), and
 * the core's lookups.
 */
export function withLookups(
  core: CoreSettings,
  parts: ReadonlyArray<{ name: string; settings: object }>,
  env: Env,
  source: string | undefined,
): Config {
  const config = {
    ...(source !== undefined ? { source } : {}),
    ...core,
    parts: Object.freeze(parts.map((p) => p.name)),
  } as Config;
  for (const { settings } of parts) {
    for (const [key, value] of Object.entries(settings)) {
      if (typeof value === 'function') Object.defineProperty(config, key, { value, enumerable: false });
      else (config as unknown as Record<string, unknown>)[key] = value;
    }
  }
  const byId = nameTable(core.credentials.map((c) => [c.id, c] as const));
  const credential = (id: string): CredentialConfig => {
    const c = byName(byId, id);
    if (!c) {
      const known = Object.keys(byId);
      throw new ConfigError(
        [`unknown credential '${String(id)}'${didYouMean(id, known)} (configured: ${nameList(known)})`],
        'QG_UNKNOWN_CREDENTIAL',
      );
    }
    return c;
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
    apiKey: { value: apiKey, enumerable: false },
  });
  return config;
}

/** The bucket and cost a method spends for a credential; ConfigError (QG_UNKNOWN_METHOD) otherwise. */
export function methodOf(credential: CredentialConfig, method: string): MethodSpec {
  const spec = byName(credential.methods, method);
  if (!spec) {
    throw new ConfigError(
      [
        `unknown method '${String(method)}' for credential '${credential.id}' (profile ${credential.profile})${didYouMean(method, Object.keys(credential.methods))}`,
      ],
      'QG_UNKNOWN_METHOD',
      { field: 'method' },
    );
  }
  return spec;
}

/** A credential's bucket; ConfigError (QG_UNKNOWN_BUCKET) otherwise. */
export function bucketOf(credential: CredentialConfig, bucket: string): BucketConfig {
  const b = byName(credential.buckets, bucket);
  if (!b) {
    const names = Object.keys(credential.buckets);
    throw new ConfigError(
      [
        `unknown bucket '${String(bucket)}' for credential '${credential.id}'${didYouMean(bucket, names)} (has ${names.join(', ')})`,
      ],
      'QG_UNKNOWN_BUCKET',
      { field: 'bucket' },
    );
  }
  return b;
}
