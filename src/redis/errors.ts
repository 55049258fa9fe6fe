/**
 * What ioredis throws, as the stores' typed errors. Every family of Redis error reply is mapped on
 * purpose, and the message is always ours: Redis's and ioredis' own text (which can carry a script's
 * SHA and line, or a server's internals) stays in the error's `cause`, never in a line a user
 * reads. Never includes a password.
 *
 * - The server cannot take the call right now (out of memory with a policy that evicts nothing, a
 *   failing RDB save, a replica, a lost primary, a long script, loading its data, a cluster that is
 *   down or moving keys, too few replicas) or cannot be reached (refused, reset, timed out, not
 *   connected): `QG_STORE_UNAVAILABLE`, so the call site's fail-open/closed applies and the CLI exits
 *   69.
 * - Wrong credentials, an untrusted TLS certificate: `QG_CONFIG_INVALID` (retrying will not help).
 * - A key of another type: `QG_STORE_CORRUPT`.
 * - Any other reply error: a bug, `QG_INTERNAL`, naming only the reply's code word.
 */
import { QuotaGuardError, StoreUnavailableError } from '../errors.js';

/** Node's codes for a TLS certificate it does not accept. */
const TLS_UNTRUSTED = /CERT|SELF_SIGNED|UNABLE_TO_(VERIFY|GET_ISSUER)/;

/** Each reply code that means "not now", and what an operator reads for it. */
const UNAVAILABLE_REPLIES: Record<string, string> = {
  OOM: 'Redis is out of memory (maxmemory reached, and its maxmemory-policy evicts nothing) and refuses writes',
  MISCONF:
    'Redis refuses writes because its last RDB save failed (stop-writes-on-bgsave-error); its log says why',
  READONLY:
    'the server is a read-only replica, not the primary: check the store URL, or wait for the failover to end',
  MASTERDOWN: 'the replica has lost its primary and does not serve stale data (replica-serve-stale-data no)',
  BUSY: 'a script has run on Redis past busy-reply-threshold, and Redis answers nothing else until it ends',
  LOADING: 'Redis is loading its data set into memory',
  CLUSTERDOWN: 'the Redis Cluster is down',
  TRYAGAIN: 'the Redis Cluster is moving the keys of this call',
  NOREPLICAS: 'not enough replicas are connected to accept writes (min-replicas-to-write)',
};

/** What ioredis' own errors mean (their text is matched here and never shown). */
const CLIENT_ERRORS: ReadonlyArray<[RegExp, string]> = [
  [/^Command timed out/, 'no answer within the command timeout (store.commandTimeoutMs)'],
  [/^(Stream|Cluster) isn't (writeable|ready)/, 'not connected (reconnecting)'],
  [
    /^Connection is (closed|aborted|discarded)|^(Cluster|Node) is (disconnected|disconnecting|ended)/,
    'the connection was closed',
  ],
  [/^None of startup nodes is available/, 'no node of the Redis Cluster answered'],
  [/^Too many Cluster redirections/, 'the Redis Cluster kept redirecting the call (its slots are moving)'],
  [/^Socket timeout|^connect ETIMEDOUT/, 'connect timed out'],
  [/^Reached the max retries per request/, 'not connected (reconnecting)'],
  [/^Failed to refresh slots cache/, 'no node of the Redis Cluster answered'],
  [/sentinels? (are|is) unreachable|None of (the )?sentinels/i, 'no Sentinel answered'],
];

/** Node's socket errors an operator meets, in words. */
const SOCKET_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  ETIMEDOUT: 'connect timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found (DNS did not answer)',
};

/** The code word a Redis error reply starts with (`OOM`, `ERR`…), when it has one. */
function replyCode(message: string): string | undefined {
  const first = /^([A-Z][A-Z_]{1,31})\b/.exec(message)?.[1];
  // Redis before 7 wraps the error a script's call met: `ERR Error running script (call to
  // f_<sha>): @user_script:12: -OOM command not allowed…`. The inner code is the one that counts.
  const inner = /: -([A-Z][A-Z_]{1,31}) /.exec(message)?.[1];
  return first === 'ERR' && inner !== undefined ? inner : first;
}

/**
 * Why a call failed, in our words: the reply's meaning and code for a Redis reply, a Node socket
 * error's code (`ECONNREFUSED`), or what an ioredis error means. Never the raw text.
 */
export function describeRedisFailure(e: unknown): string {
  const err = e as { name?: string; message?: unknown; code?: unknown } | null | undefined;
  const message = String(err?.message ?? e);
  if (err?.name === 'ReplyError') {
    const code = replyCode(message);
    const says = code !== undefined ? UNAVAILABLE_REPLIES[code] : undefined;
    if (says) return `${says} (${code})`;
    return `Redis answered with an error quota-guard does not expect (${code ?? 'no code'})`;
  }
  if (typeof err?.code === 'string' && /^E[A-Z_]+$/.test(err.code)) {
    return `${SOCKET_ERRORS[err.code] ?? 'the connection failed'} (${err.code})`;
  }
  for (const [re, says] of CLIENT_ERRORS) if (re.test(message)) return says;
  return 'the connection failed';
}

/**
 * What a typed error keeps of ioredis' error, for a debug log: its name, code and the first line of
 * its text. Not the error itself: ioredis hangs the failed command on it (an AUTH's password, a
 * script's keys and arguments).
 */
export function causeOf(e: unknown): Error {
  const err = e as { name?: unknown; message?: unknown; code?: unknown } | null | undefined;
  const cause = new Error(
    String(err?.message ?? e)
      .split('\n')[0]!
      .slice(0, 500),
  );
  if (typeof err?.name === 'string') cause.name = err.name;
  if (typeof err?.code === 'string') Object.assign(cause, { code: err.code });
  return cause;
}

/** The reply's code word for `details`, so that logs and callers can match on it. */
function detailsOf(e: unknown): Record<string, unknown> {
  const err = e as { name?: string; message?: unknown; code?: unknown } | null | undefined;
  if (err?.name === 'ReplyError') {
    const code = replyCode(String(err.message));
    return code !== undefined ? { redisReply: code } : {};
  }
  return typeof err?.code === 'string' ? { code: err.code } : {};
}

/**
 * Map whatever ioredis threw to the stores' errors. `where` is the server's address (see
 * `redisAddress`), so the operator knows which Redis to look at.
 */
export function mapRedisError(e: unknown, what: string, where?: string): unknown {
  if (e instanceof QuotaGuardError) return e;
  const err = e as { name?: string; message?: unknown; code?: unknown } | null | undefined;
  const message = String(err?.message ?? e);
  const store = where !== undefined ? `Redis ledger at ${where}` : 'Redis ledger';
  const details = detailsOf(e);
  const cause = causeOf(e);
  if (typeof err?.code === 'string' && TLS_UNTRUSTED.test(err.code)) {
    // Not an outage: retrying will not make the certificate trusted.
    return new QuotaGuardError(
      'QG_CONFIG_INVALID',
      `${store}: ${what}: the server's TLS certificate is not trusted (${err.code}); ` +
        'give Node the CA that signed it with NODE_EXTRA_CA_CERTS=<file>',
      { cause, details },
    );
  }
  if (err?.name === 'ReplyError') {
    const code = replyCode(message);
    if (code === 'WRONGPASS' || code === 'NOAUTH' || code === 'NOPERM') {
      return new QuotaGuardError(
        'QG_CONFIG_INVALID',
        `${store}: ${what}: authentication failed (${code}); check the user and password of the store URL`,
        { cause, details },
      );
    }
    if (code !== undefined && code in UNAVAILABLE_REPLIES) {
      return new StoreUnavailableError(`${store}: ${what} failed: ${describeRedisFailure(e)}`, {
        cause,
        details,
      });
    }
    if (code === 'WRONGTYPE') {
      return new QuotaGuardError('QG_STORE_CORRUPT', `${store}: ${what}: a ledger key holds another type`, {
        cause,
        details,
      });
    }
    return new QuotaGuardError('QG_INTERNAL', `${store}: ${what} failed: ${describeRedisFailure(e)}`, {
      cause,
      details,
    });
  }
  // Connection refused/reset, command timeout, stream not writeable, cluster slots not reachable…
  return new StoreUnavailableError(`${store}: ${what} failed: ${describeRedisFailure(e)}`, {
    cause,
    details,
  });
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
