/**
 * No web page in the budget. A page in a browser can send a request to any address the browser
 * reaches — `127.0.0.1`, the office network — and a `text/plain` POST or a GET goes out without
 * asking anyone first: with no tokens file (allowed on loopback), a page could spend, report a quota
 * exhausted (which blocks the bucket for every job) or read the status. And a name the attacker
 * controls can be pointed at 127.0.0.1 after the page has loaded (DNS rebinding), so the browser
 * takes the API for the page's own origin.
 *
 * So the decision routes:
 * - refuse a request that carries an `Origin` (browsers send one with every POST and every
 *   cross-origin fetch), or a `Sec-Fetch-Site` other than `none` (a browser's own navigation),
 *   unless the origin is one the operator configured (`--allow-origin`); a configured origin gets
 *   the CORS headers a browser needs, and a preflight answered;
 * - answer only to the `Host` names they serve: an IP address (no page can rebind that) or
 *   `localhost`, and the names the operator configured (`--allow-host`). A rebinding page's
 *   requests carry its own name, which is refused.
 *
 * With a tokens file too: a token in a page's code would be the page's to spend.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { HttpFailure } from './body.js';

export interface CallerRules {
  /** Host names served besides IP addresses and `localhost` (lower case). */
  hosts: readonly string[];
  /** Origins (`https://admin.example:8443`) whose pages may call the API. */
  origins: readonly string[];
}

export const NO_WEB_CALLERS: CallerRules = { hosts: [], origins: [] };

/** `quota.internal:9464` → `quota.internal`; `[::1]:9464` → `::1`; a trailing dot dropped. */
export function hostName(header: string): string {
  const h = header.trim().toLowerCase();
  const bracketed = /^\[([^\]]+)\](?::\d*)?$/.exec(h);
  const name = bracketed ? bracketed[1]! : h.replace(/:\d*$/, '');
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

function hostServed(header: string | undefined, rules: CallerRules): boolean {
  // HTTP/1.0 without a Host is not a browser.
  if (header === undefined) return true;
  const name = hostName(header);
  return isIP(name) !== 0 || name === 'localhost' || rules.hosts.includes(name);
}

/** The request's Origin when it is a configured one. */
function allowedOrigin(req: IncomingMessage, rules: CallerRules): string | undefined {
  const origin = req.headers.origin;
  return origin !== undefined && rules.origins.includes(origin) ? origin : undefined;
}

/** Throws the 403 for a request from a page, or for a Host this service does not answer to. */
export function checkCaller(req: IncomingMessage, rules: CallerRules): void {
  const host = req.headers.host;
  if (!hostServed(host, rules)) {
    throw new HttpFailure(
      403,
      'host_refused',
      `the decision API does not answer to the name '${hostName(host ?? '').slice(0, 100)}': an IP address, localhost, or a name given with --allow-host`,
    );
  }
  const origin = req.headers.origin;
  const site = req.headers['sec-fetch-site'];
  if ((origin !== undefined || (site !== undefined && site !== 'none')) && !allowedOrigin(req, rules)) {
    throw new HttpFailure(
      403,
      'origin_refused',
      origin !== undefined
        ? `requests from web pages are refused (Origin '${origin.slice(0, 100)}' is not given with --allow-origin)`
        : 'requests from web pages are refused (Sec-Fetch-Site without a configured Origin)',
    );
  }
}

/** The CORS headers for a configured origin's request (none for any other). */
export function corsHeaders(req: IncomingMessage, rules: CallerRules): Record<string, string> {
  const origin = allowedOrigin(req, rules);
  return origin === undefined ? {} : { 'access-control-allow-origin': origin, vary: 'Origin' };
}

/** A configured origin's preflight: answered 204 with what it may send; true when it was one. */
export function answerPreflight(req: IncomingMessage, res: ServerResponse, rules: CallerRules): boolean {
  if (req.method !== 'OPTIONS' || allowedOrigin(req, rules) === undefined) return false;
  res.writeHead(204, {
    ...corsHeaders(req, rules),
    'access-control-allow-methods': 'GET, POST',
    'access-control-allow-headers': 'authorization, content-type',
    'access-control-max-age': '600',
    'content-length': '0',
  });
  res.end();
  return true;
}
