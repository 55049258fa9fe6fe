/**
 * The lookups of a resolved config: `credential(id)`, `region(code)` and `apiKey(id)` on the config
 * itself (non-enumerable, so that logging or serialising a config shows data only), and a
 * credential's method or bucket by name. Each throws a ConfigError naming what is configured.
 */
import { ConfigError } from '../errors.js';
import type { MethodSpec } from '../profiles/profiles.js';
import type { Resolved } from './resolve.js';
import type { BucketConfig, Config, CredentialConfig, Env } from './types.js';

export function withLookups(resolved: Resolved, env: Env, source: string | undefined): Config {
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
  // Names are data: `constructor` or `__proto__` is an unknown method, not Object's.
  const spec = Object.hasOwn(credential.methods, method) ? credential.methods[method] : undefined;
  if (!spec) {
    throw new ConfigError(
      [`unknown method '${method}' for credential '${credential.id}' (profile ${credential.profile})`],
      'QG_UNKNOWN_METHOD',
      { field: 'method' },
    );
  }
  return spec;
}

/** A credential's bucket; ConfigError (QG_UNKNOWN_BUCKET) otherwise. */
export function bucketOf(credential: CredentialConfig, bucket: string): BucketConfig {
  const b = Object.hasOwn(credential.buckets, bucket) ? credential.buckets[bucket] : undefined;
  if (!b) {
    throw new ConfigError(
      [
        `unknown bucket '${bucket}' for credential '${credential.id}' (has ${Object.keys(credential.buckets).join(', ')})`,
      ],
      'QG_UNKNOWN_BUCKET',
      { field: 'bucket' },
    );
  }
  return b;
}
