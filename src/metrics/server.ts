/**
 * The loopback HTTP server of `quota-guard run --http 127.0.0.1:9464` and `quota-guard serve`:
 * `GET /` (the status page, when given), `GET /metrics` (Prometheus text format) and `GET /healthz`
 * (200 when the ledger store and the cache answer, else 503 with the reason, as JSON), and the
 * decision API's `/v1/…` routes when it is given one (src/api/). Over TLS when given a certificate.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { DEFAULT_HTTP_HOST, DEFAULT_HTTP_PORT } from '../http-address.js';
import { closeServer, listen } from '../http-server.js';
import { checkHealth, type HealthSources } from './health.js';
import type { Metrics } from './metrics.js';

/** Open connections at most; see `startMetricsServer`. */
export const MAX_CONNECTIONS = 256;

export interface MetricsServer {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

export interface MetricsServerOptions extends HealthSources {
  metrics: Metrics;
  host?: string;
  port?: number;
  /** The status page's HTML, rendered per request (`/`). */
  page?: () => Promise<string>;
  /** Serves the paths it knows (the decision API's `/v1/…`) and returns true; false for the rest. */
  routes?: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** Serve HTTPS with this certificate chain and key (PEM). */
  tls?: { cert: Buffer; key: Buffer };
}

/**
 * Keep-alive and slow-client limits: an idle kept-alive connection stays open a minute (a cron job
 * makes its calls seconds apart), a client gets 10 s to send its headers and 15 s for the whole
 * request, after which Node answers 408 and closes. Node checks those two limits on a timer (every
 * 30 s by default, so a client could hold a connection for 40 s); here every second.
 */
export const SERVER_TIMEOUTS = {
  keepAliveTimeout: 60_000,
  headersTimeout: 10_000,
  requestTimeout: 15_000,
  connectionsCheckingInterval: 1_000,
} as const;

/**
 * One call of `fn` in flight at a time, its answer shared by every request that arrives meanwhile.
 * Without it, 1,000 concurrent requests for the status page were 1,000 renders in flight, each
 * holding its own copy of the ledger's report and the run history: hundreds of MB that V8 then
 * kept. With it, what a burst costs is one render plus the waiting sockets, however many arrive.
 */
export function shared<T>(fn: () => Promise<T>): () => Promise<T> {
  let inFlight: Promise<T> | undefined;
  return () => {
    inFlight ??= fn().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };
}

export async function startMetricsServer(opts: MetricsServerOptions): Promise<MetricsServer> {
  const host = opts.host ?? DEFAULT_HTTP_HOST;
  // Rendered once into a Buffer that every waiting answer writes: a string would be copied into
  // each socket's queue, a Buffer is queued by reference.
  const scrape = shared(async () => Buffer.from(await opts.metrics.scrape()));
  const health = shared(() => checkHealth(opts));
  const render = opts.page;
  const page = render ? shared(async () => Buffer.from(await render())) : undefined;
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    if (opts.routes?.(req, res)) return;
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string | Buffer) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(405, 'text/plain; charset=utf-8', 'method not allowed\n');
      return;
    }
    if (path === '/metrics') {
      scrape().then(
        (text) => send(200, opts.metrics.contentType, text),
        () => send(500, 'text/plain; charset=utf-8', 'metrics could not be collected\n'),
      );
    } else if (path === '/healthz') {
      health().then(
        (h) =>
          send(
            h.ok ? 200 : 503,
            'application/json',
            `${JSON.stringify({ status: h.ok ? 'ok' : 'unavailable', ...h })}\n`,
          ),
        () => send(503, 'application/json', '{"status":"unavailable","ok":false}\n'),
      );
    } else if (path === '/' && page) {
      page().then(
        (html) => send(200, 'text/html; charset=utf-8', html),
        () =>
          send(
            503,
            'text/plain; charset=utf-8',
            'the status page could not be rendered: is the ledger store up?\n',
          ),
      );
    } else {
      send(
        404,
        'text/plain; charset=utf-8',
        `not found: try ${opts.page ? '/, ' : ''}/metrics or /healthz\n`,
      );
    }
  };
  const server: Server = opts.tls
    ? (createTlsServer(
        { ...SERVER_TIMEOUTS, cert: opts.tls.cert, key: opts.tls.key },
        handler,
      ) as unknown as Server)
    : createServer(SERVER_TIMEOUTS, handler);
  server.keepAliveTimeout = SERVER_TIMEOUTS.keepAliveTimeout;
  // The hard bound: connections past this many are closed as they arrive (a scraper retries), so a
  // flood cannot pile up sockets and their queued answers without limit.
  server.maxConnections = MAX_CONNECTIONS;
  const { origin, port } = await listen(server, host, opts.port ?? DEFAULT_HTTP_PORT, '--http');
  const url = opts.tls ? origin.replace(/^http:/, 'https:') : origin;
  return { url, port, close: () => closeServer(server) };
}
