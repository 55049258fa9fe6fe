/**
 * A request that failed below HTTP: whether it can have reached the upstream. Only a connection
 * that never opened proves it did not (refused, no such host, TLS handshake refused, connect
 * timeout); anything later (a reset, a deadline) may have been received and is charged.
 */
import { UpstreamError } from '../outcome/errors.js';

/** Failure codes of connection establishment: the request was never written. */
const NEVER_OPENED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_NONAME',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_TLS_HANDSHAKE_TIMEOUT',
]);

function codeOf(e: unknown): string | undefined {
  const c = (e as { code?: unknown } | null)?.code;
  return typeof c === 'string' ? c : undefined;
}

/** Whether an error (fetch's TypeError, undici's, node's) came out of opening the connection. */
export function neverOpened(e: unknown, depth = 0): boolean {
  if (depth > 4 || e === null || typeof e !== 'object') return false;
  const code = codeOf(e);
  if (code !== undefined && (NEVER_OPENED.has(code) || code.startsWith('ERR_SSL_'))) return true;
  // Several addresses tried (happy eyeballs): never opened only if none of them opened.
  const errors = (e as { errors?: unknown }).errors;
  if (Array.isArray(errors) && errors.length > 0) return errors.every((x) => neverOpened(x, depth + 1));
  return neverOpened((e as { cause?: unknown }).cause, depth + 1);
}

function innermost(e: unknown): { message: string; code?: string } {
  let cur = e as { message?: unknown; code?: unknown; cause?: unknown } | null;
  for (let i = 0; i < 4 && cur?.cause && typeof cur.cause === 'object'; i++) cur = cur.cause as typeof cur;
  const code = codeOf(cur) ?? codeOf(e);
  return { message: typeof cur?.message === 'string' ? cur.message : String(e), ...(code ? { code } : {}) };
}

/** The `UpstreamError` for a failure below HTTP (`reached: 'never'` only when the connection never opened). */
export function transportError(e: unknown, facts: { sent: boolean; deadline: boolean }): UpstreamError {
  const { message, code } = innermost(e);
  const what = facts.deadline
    ? 'no complete answer before the deadline (the request may have been received)'
    : facts.sent
      ? 'no complete answer (the request may have been received)'
      : 'request not sent';
  return new UpstreamError('QG_UPSTREAM_TRANSPORT', `${what}: ${message}${code ? ` (${code})` : ''}`, {
    reached: facts.sent || facts.deadline ? 'maybe' : 'never',
    ...(code ? { details: { transportCode: code } } : {}),
  });
}
