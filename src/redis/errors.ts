/**
 * What ioredis throws, as the stores' typed errors. Never includes a password.
 */
import { QuotaGuardError, StoreUnavailableError } from '../errors.js';

/** Node's codes for a TLS certificate it does not accept. */
const TLS_UNTRUSTED = /CERT|SELF_SIGNED|UNABLE_TO_(VERIFY|GET_ISSUER)/;

const UNAVAILABLE_REPLIES = /^(CLUSTERDOWN|TRYAGAIN|LOADING|MASTERDOWN|BUSY|READONLY|NOREPLICAS)\b/;

/**
 * Map whatever ioredis threw to the ledger's errors. Never includes a password. `where` is the
 * server's address (see `redisAddress`), so the operator knows which Redis to look at.
 */
export function mapRedisError(e: unknown, what: string, where?: string): unknown {
  if (e instanceof QuotaGuardError) return e;
  const err = e as { name?: string; message?: string; code?: unknown };
  const message = String(err?.message ?? e);
  const ledger = where !== undefined ? `Redis ledger at ${where}` : 'Redis ledger';
  if (typeof err?.code === 'string' && TLS_UNTRUSTED.test(err.code)) {
    // Not an outage: retrying will not make the certificate trusted.
    return new QuotaGuardError(
      'QG_CONFIG_INVALID',
      `${ledger}: ${what}: the server's TLS certificate is not trusted (${message.split('\n')[0]}); ` +
        'give Node the CA that signed it with NODE_EXTRA_CA_CERTS=<file>',
    );
  }
  if (err?.name === 'ReplyError') {
    if (/^(WRONGPASS|NOAUTH|NOPERM)\b/.test(message)) {
      return new QuotaGuardError(
        'QG_CONFIG_INVALID',
        `${ledger}: ${what}: authentication failed (${message.split(' ')[0]}); check the user and password of the store URL`,
      );
    }
    if (UNAVAILABLE_REPLIES.test(message)) {
      return new StoreUnavailableError(`${ledger}: ${what} failed: ${message.split('\n')[0]}`, {
        cause: e,
      });
    }
    if (/^WRONGTYPE\b/.test(message)) {
      return new QuotaGuardError('QG_STORE_CORRUPT', `${ledger}: ${what}: a ledger key holds another type`, {
        cause: e,
      });
    }
    return new QuotaGuardError('QG_INTERNAL', `${ledger}: ${what} failed: ${message.split('\n')[0]}`, {
      cause: e,
    });
  }
  // Connection refused/reset, command timeout, stream not writeable, cluster slots not reachable…
  return new StoreUnavailableError(`${ledger}: ${what} failed: ${message.split('\n')[0]}`, { cause: e });
}

/**
 * Whether a failed command may still run on the server: it was written and its answer never came
 * (a command timeout, the connection lost while it was in flight). A reply error, or a command
 * refused before it was written (no connection: ioredis keeps no offline queue), never runs.
 */
export function mayStillRun(e: unknown): boolean {
  const err = e as { name?: string; message?: string } | null;
  if (err?.name === 'ReplyError') return false;
  return !/^(Stream isn't writeable|Cluster isn't ready)/.test(String(err?.message ?? ''));
}
