/**
 * Access tokens for Google's APIs, through google-auth-library: from a service account's key file,
 * or from Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's own login, or
 * the metadata server of the Google Cloud machine it runs on; the library honours
 * GCE_METADATA_HOST, which is how the tests reach the simulator). The library signs, caches and
 * refreshes the tokens; nothing here signs a token by hand, and a token never reaches a log line
 * or an error message. google-auth-library is loaded on the first token asked for.
 */
import { QuotaGuardError } from '../errors.js';
import { redactText } from '../outcome/redact.js';

/** Gives a bearer token for each request (the same one until it nears its expiry). */
export interface AccessTokenSource {
  token(): Promise<string>;
}

/** Read-only access to Cloud Monitoring: the narrowest scope `timeSeries.list` accepts. */
export const MONITORING_READ_SCOPE = 'https://www.googleapis.com/auth/monitoring.read';

export interface GoogleAuthOptions {
  /** A service account's JSON key file; omitted: Application Default Credentials. */
  keyFile?: string;
  scopes?: readonly string[];
  /**
   * A project the credentials are used with. Given, the library does not go looking for a default
   * project (the environment, gcloud's configuration, the metadata server), which costs seconds.
   */
  projectId?: string;
}

/** A token source over google-auth-library. */
export function googleAuthTokens(options: GoogleAuthOptions = {}): AccessTokenSource {
  let auth: Promise<{ getAccessToken(): Promise<string | null | undefined> }> | undefined;
  const from = options.keyFile === undefined ? 'Application Default Credentials' : options.keyFile;
  return {
    async token() {
      auth ??= import('google-auth-library').then(
        (mod) =>
          // A CommonJS package: Node names its exports, the CLI's bundle gives them as `default`.
          new (mod.GoogleAuth ?? (mod as unknown as { default: typeof mod }).default.GoogleAuth)({
            scopes: [...(options.scopes ?? [MONITORING_READ_SCOPE])],
            ...(options.projectId !== undefined ? { projectId: options.projectId } : {}),
            ...(options.keyFile !== undefined ? { keyFilename: options.keyFile } : {}),
          }),
      );
      let token: string | null | undefined;
      const quiet = quietMetadataWarnings();
      try {
        token = await (await auth).getAccessToken();
      } catch (e) {
        auth = undefined; // a key file fixed or a metadata server back: try afresh next time
        throw authError(from, e);
      } finally {
        quiet.end();
      }
      if (typeof token !== 'string' || token === '') throw authError(from, new Error('no token given'));
      return token;
    },
  };
}

/**
 * While Application Default Credentials look for a metadata server, the library reports a lookup
 * that failed in an unexpected way as a process warning (`MetadataLookupWarning`), printed on
 * stderr beside the one line that already says no credentials were found. Those warnings are held
 * back while a token is asked for; every other warning passes as before.
 */
let quietCalls = 0;
let emitWarning: typeof process.emitWarning | undefined;

function quietMetadataWarnings(): { end(): void } {
  if (quietCalls++ === 0) {
    const original = process.emitWarning;
    emitWarning = original;
    process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
      const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
      if (type === 'MetadataLookupWarning') return;
      return (original as (...a: unknown[]) => void).call(process, warning, ...rest);
    } as typeof process.emitWarning;
  }
  let ended = false;
  return {
    end() {
      if (ended) return;
      ended = true;
      if (--quietCalls === 0 && emitWarning) {
        process.emitWarning = emitWarning;
        emitWarning = undefined;
      }
    },
  };
}

/** A fixed token, for tests and for a token obtained elsewhere. */
export function staticTokens(token: string): AccessTokenSource {
  return { token: async () => token };
}

/** One line for a credential that gives no token: which source, and the library's reason. */
function authError(from: string, e: unknown): QuotaGuardError {
  const raw = e instanceof Error ? e.message : String(e);
  const first = (raw.split('\n')[0] ?? raw).trim();
  const reason = /Could not load the default credentials/i.test(first)
    ? 'none found (set reconcile.auth.keyFile or GOOGLE_APPLICATION_CREDENTIALS, or run on Google Cloud)'
    : /ENOENT|no such file/i.test(first)
      ? 'the key file does not exist'
      : redactText(first.length > 300 ? `${first.slice(0, 300)}…` : first);
  return new QuotaGuardError('QG_RECONCILE_AUTH', `Google credentials from ${from}: ${reason}`, {
    details: { from },
  });
}
