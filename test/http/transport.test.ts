import { describe, expect, it } from 'vitest';
import { neverOpened, transportError } from '../../src/http/transport.js';

const err = (code: string, extra: object = {}) => Object.assign(new Error(code), { code }, extra);

describe('a failure below HTTP', () => {
  it('never reached the upstream only when the connection never opened', () => {
    // fetch wraps the cause in a TypeError('fetch failed').
    const wrapped = (cause: unknown) => new TypeError('fetch failed', { cause });
    for (const code of [
      'ECONNREFUSED',
      'ENOTFOUND',
      'EAI_AGAIN',
      'UND_ERR_CONNECT_TIMEOUT',
      'DEPTH_ZERO_SELF_SIGNED_CERT',
      'ERR_TLS_CERT_ALTNAME_INVALID',
      'ERR_SSL_WRONG_VERSION_NUMBER',
    ]) {
      expect(neverOpened(wrapped(err(code))), code).toBe(true);
    }
    for (const code of ['ECONNRESET', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT', 'EPIPE']) {
      expect(neverOpened(wrapped(err(code))), code).toBe(false);
    }
    // Happy eyeballs: every address refused, or one of them got further.
    expect(neverOpened(wrapped(new AggregateError([err('ECONNREFUSED'), err('ENETUNREACH')])))).toBe(true);
    expect(neverOpened(wrapped(new AggregateError([err('ECONNREFUSED'), err('ECONNRESET')])))).toBe(false);
    expect(neverOpened(new Error('no code'))).toBe(false);
  });

  it('becomes an UpstreamError saying whether it may have been charged', () => {
    const refused = transportError(new TypeError('fetch failed', { cause: err('ECONNREFUSED') }), {
      sent: false,
      deadline: false,
    });
    expect(refused).toMatchObject({ code: 'QG_UPSTREAM_TRANSPORT', reached: 'never', charged: false });
    expect(refused.message).toMatch(/request not sent: ECONNREFUSED \(ECONNREFUSED\)/);
    const late = transportError(new DOMException('timed out', 'TimeoutError'), {
      sent: true,
      deadline: true,
    });
    expect(late).toMatchObject({ reached: 'maybe', charged: true });
    expect(late.message).toMatch(/before the deadline/);
  });
});
