/**
 * Turning what came back from the upstream (an HTTP answer or a transport failure) into an
 * `UpstreamError` with a stable code and the right `reached`.
 *
 * HTTP answers: Google's error model, the same for every Google API, is read by
 * src/outcome/google.ts; this file adds what only YouTube's answers mean (a region without a
 * chart). See docs/upstream.md for the shapes and where they were recorded.
 *
 * Transport failures are classified in src/outcome/transport.ts (for any client): 'never' only when
 * the request provably was not written, 'maybe' (charged) otherwise.
 */
// Registers the application's error codes, which this module throws.
import '../errors.js';
import { UpstreamError } from '../../outcome/errors.js';
import {
  type GoogleErrorFacts,
  googleErrorFromResponse,
  type HeadersLike,
  type RefinedCode,
} from '../../outcome/google.js';
import type { TransportContext } from '../../outcome/transport.js';

export { parseRetryAfter } from '../../outcome/google.js';
export { errorFromTransport, scrubbedCause, type TransportFacts } from '../../outcome/transport.js';

/** Who made the call: the API method name (e.g. 'videos.list'), the redacted URL, the API key. */
export type CallContext = TransportContext;

/**
 * YouTube's own 4xx reasons: a configured region the upstream has no chart for
 * (`videoChartNotFound`, or a reason naming `regionCode`). That region's job stops, the others run.
 */
export function youtubeRefine(_status: number, facts: GoogleErrorFacts): RefinedCode | undefined {
  const region = facts.reasons.find((r) => r === 'videoChartNotFound' || /regioncode/i.test(r));
  return region === undefined ? undefined : { code: 'QG_UPSTREAM_REGION_UNSUPPORTED', reason: region };
}

/**
 * An error for a non-2xx HTTP answer: Google's error model (src/outcome/google.ts) with YouTube's
 * region reasons. The upstream answered, so `reached` is 'yes'.
 */
export function errorFromResponse(
  status: number,
  headers: HeadersLike,
  body: string,
  ctx: CallContext,
): UpstreamError {
  return googleErrorFromResponse(status, headers, body, ctx, { refine: youtubeRefine });
}

/** A 2xx answer whose body is not what the method returns. */
export function badResponse(
  ctx: CallContext,
  status: number,
  problem: string,
  issues?: string[],
): UpstreamError {
  return new UpstreamError('QG_UPSTREAM_BAD_RESPONSE', `${ctx.method}: unexpected response: ${problem}`, {
    reached: 'yes',
    status,
    method: ctx.method,
    url: ctx.url,
    ...(issues === undefined ? {} : { details: { issues } }),
  });
}
