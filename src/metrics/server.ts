/**
 * The loopback HTTP server of `quota-guard run --http 127.0.0.1:9464` and `quota-guard serve`:
 * `GET /` (the status page, when given), `GET /metrics` (Prometheus text format) and `GET /healthz`
 * (200 when the ledger store and the cache answer, else 503 with the reason, as JSON). Nothing else.
 */
import { createServer, type Server } from 'node:http';
import { closeServer, listen } from '../http-server.js';
import { checkHealth, type HealthSources } from './health.js';
import { DEFAULT_HTTP_HOST, DEFAULT_HTTP_PORT } from './http-address.js';
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
}

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
  const server: Server = createServer((req, res) => {
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
  });
  // The hard bound: connections past this many are closed as they arrive (a scraper retries), so a
  // flood cannot pile up sockets and their queued answers without limit.
  server.maxConnections = MAX_CONNECTIONS;
  const { origin, port } = await listen(server, host, opts.port ?? DEFAULT_HTTP_PORT, '--http');
  return { url: origin, port, close: () => closeServer(server) };
}
