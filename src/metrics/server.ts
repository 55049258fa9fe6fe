/**
 * The HTTP server of `quota-guard run --http 127.0.0.1:9464` and `quota-guard serve`: `GET /` (the
 * status page, when given), `GET /metrics` (Prometheus text format) and `GET /healthz` (200 when
 * the ledger store and the cache answer — and, for a server that spends, when the store takes
 * writes — else 503 with the reason, as JSON), and the decision API's `/v1/…` routes when it is
 * given one (src/api/). Over TLS when given a certificate; on the socket systemd passes when
 * started by socket activation.
 *
 * It listens first (`listenHttp`), holding the requests that arrive until it is told what to serve
 * (`serve`), so that `serve` can check the address it really listens on before it opens or creates
 * a store.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { DEFAULT_HTTP_HOST, DEFAULT_HTTP_PORT } from '../http-address.js';
import { drainServer, inheritedListenFd, listen } from '../http-server.js';
import { type ConnectionStats, limitConnections } from './connections.js';
import { checkHealth, type HealthSources } from './health.js';
import type { Metrics } from './metrics.js';

/** Open connections at most; see src/metrics/connections.ts for who makes room when it is full. */
export const MAX_CONNECTIONS = 256;

/** How long a TLS handshake may take (Node's default is 120 s, which let unfinished ones hold sockets). */
export const TLS_HANDSHAKE_TIMEOUT_MS = 5_000;

/** How long a stopping server lets the requests it is answering finish. */
export const DRAIN_MS = 5_000;

export interface MetricsServer {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

export interface ListenOptions {
  host?: string;
  port?: number;
  /** Serve HTTPS with this certificate chain and key (PEM). */
  tls?: { cert: Buffer; key: Buffer };
  /** Listen on the socket systemd passed (LISTEN_FDS), when there is one, instead of host:port. */
  inherit?: boolean;
}

export interface ServeOptions extends HealthSources {
  metrics: Metrics;
  /** The status page's HTML, rendered per request (`/`). */
  page?: () => Promise<string>;
  /** Serves the paths it knows (the decision API's `/v1/…`) and returns true; false for the rest. */
  routes?: (req: IncomingMessage, res: ServerResponse) => boolean;
}

export interface MetricsServerOptions extends ServeOptions, Omit<ListenOptions, 'inherit'> {}

/** A server listening, not serving yet: requests wait for `serve` (or are answered 503 by `close`). */
export interface HttpListener extends MetricsServer {
  /** The host it is bound to (the inherited socket's, with socket activation). */
  readonly host: string;
  /** Listening on a socket systemd passed. */
  readonly inherited: boolean;
  serve(opts: ServeOptions): void;
  connections(): ConnectionStats;
}

/**
 * Keep-alive and slow-client limits: an idle kept-alive connection stays open a minute (a cron job
 * makes its calls seconds apart) unless the table is full, a client gets 10 s to send its headers
 * and 15 s for the whole request, after which Node answers 408 and closes. Node checks those two
 * limits on a timer (every 30 s by default, so a client could hold a connection for 40 s); here
 * every second.
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

const TEXT = 'text/plain; charset=utf-8';

/** The handler of `/`, `/metrics`, `/healthz` and the routes given. */
function handlerFor(opts: ServeOptions): (req: IncomingMessage, res: ServerResponse) => void {
  // Rendered once into a Buffer that every waiting answer writes: a string would be copied into
  // each socket's queue, a Buffer is queued by reference.
  const scrape = shared(async () => Buffer.from(await opts.metrics.scrape()));
  const health = shared(() => checkHealth(opts));
  const render = opts.page;
  const page = render ? shared(async () => Buffer.from(await render())) : undefined;
  return (req, res) => {
    if (opts.routes?.(req, res)) return;
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string | Buffer) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(405, TEXT, 'method not allowed\n');
      return;
    }
    if (path === '/metrics') {
      scrape().then(
        (text) => send(200, opts.metrics.contentType, text),
        () => send(500, TEXT, 'metrics could not be collected\n'),
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
        () => send(503, TEXT, 'the status page could not be rendered: is the ledger store up?\n'),
      );
    } else {
      send(404, TEXT, `not found: try ${opts.page ? '/, ' : ''}/metrics or /healthz\n`);
    }
  };
}

/** Listen (on host:port, or the socket systemd passed); requests wait until `serve` is called. */
export async function listenHttp(opts: ListenOptions): Promise<HttpListener> {
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  // Requests that arrive while the store opens wait for it (a restart on an inherited socket is a
  // short wait, not a refusal); the connection table bounds how many.
  let waiting: Array<[IncomingMessage, ServerResponse]> = [];
  const dispatch = (req: IncomingMessage, res: ServerResponse): void => {
    // A stopping server answers what it has and lets the client open its next connection elsewhere.
    if (!server.listening) res.setHeader('connection', 'close');
    if (handler) handler(req, res);
    else waiting.push([req, res]);
  };
  const server: Server = opts.tls
    ? (createTlsServer(
        {
          ...SERVER_TIMEOUTS,
          cert: opts.tls.cert,
          key: opts.tls.key,
          handshakeTimeout: TLS_HANDSHAKE_TIMEOUT_MS,
        },
        dispatch,
      ) as unknown as Server)
    : createServer(SERVER_TIMEOUTS, dispatch);
  server.keepAliveTimeout = SERVER_TIMEOUTS.keepAliveTimeout;
  // The hard bound, without refusing every newcomer when it is reached (src/metrics/connections.ts).
  const table = limitConnections(server, {
    max: MAX_CONNECTIONS,
    headersTimeout: SERVER_TIMEOUTS.headersTimeout,
    checkEveryMs: SERVER_TIMEOUTS.connectionsCheckingInterval,
  });
  // A TLS client that does not finish its handshake in time is closed (the default would log nothing).
  server.on('tlsClientError', () => {});
  const fd = opts.inherit ? inheritedListenFd() : undefined;
  let listening: Awaited<ReturnType<typeof listen>>;
  try {
    listening = await listen(
      server,
      opts.host ?? DEFAULT_HTTP_HOST,
      opts.port ?? DEFAULT_HTTP_PORT,
      '--http',
      fd,
    );
  } catch (e) {
    table.stop();
    throw e;
  }
  const url = opts.tls ? listening.origin.replace(/^http:/, 'https:') : listening.origin;
  let closing: Promise<void> | undefined;
  return {
    url,
    port: listening.port,
    host: listening.host,
    inherited: fd !== undefined,
    serve: (o) => {
      o.metrics.setConnections(table.stats);
      const h = handlerFor(o);
      handler = h;
      for (const [req, res] of waiting) h(req, res);
      waiting = [];
    },
    connections: table.stats,
    close: () => {
      // Never served (the store could not be opened): what waited is told to come back.
      for (const [, res] of waiting) {
        res.writeHead(503, { 'content-type': TEXT, 'cache-control': 'no-store', connection: 'close' });
        res.end('not serving\n');
      }
      waiting = [];
      closing ??= drainServer(server, DRAIN_MS).finally(() => table.stop());
      return closing;
    },
  };
}

export async function startMetricsServer(opts: MetricsServerOptions): Promise<MetricsServer> {
  const { host, port, tls, ...serve } = opts;
  const l = await listenHttp({
    ...(host !== undefined ? { host } : {}),
    ...(port !== undefined ? { port } : {}),
    ...(tls !== undefined ? { tls } : {}),
  });
  l.serve(serve);
  return l;
}
