/**
 * Small loopback servers the clients are tried against: one that never answers, one that serves the
 * API under a sub-path, one that stands as an HTTP proxy and notes what reached it, one that passes
 * requests on but swallows the answers to some spends.
 */
import { createServer as createHttpServer, type IncomingMessage, request } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface Listening {
  url: string;
  port: number;
  close(): Promise<void>;
}

async function listen(server: Server, sockets: Set<Socket>): Promise<Listening> {
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** A server that accepts connections and reads requests but never answers (a hung service). */
export function hungServer(): Promise<Listening & { requests: () => number }> {
  let requests = 0;
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    s.on('error', () => {});
    s.on('data', (d) => {
      if (/^(GET|POST) /.test(d.toString('latin1'))) requests++;
    });
  });
  return listen(server, sockets).then((l) => ({ ...l, requests: () => requests }));
}

/** A reverse proxy serving `target` under `/quota/` only: any other path is a 404 of its own. */
export function subPathProxy(target: string): Promise<Listening & { paths: string[] }> {
  const paths: string[] = [];
  const t = new URL(target);
  const sockets = new Set<Socket>();
  const server = createHttpServer((req, res) => {
    paths.push(req.url ?? '');
    if (!req.url?.startsWith('/quota/')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('no such path on this proxy');
      return;
    }
    const up = request(
      {
        host: t.hostname,
        port: t.port,
        method: req.method,
        path: req.url.slice('/quota'.length),
        headers: req.headers,
      },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    up.on('error', () => res.writeHead(502).end());
    req.pipe(up);
  });
  return listen(server as unknown as Server, sockets).then((l) => ({ ...l, paths }));
}

/** An HTTP proxy that only notes what reached it (and answers 502): the requests it saw, headers and all. */
export function notingProxy(): Promise<Listening & { seen: IncomingMessage['headers'][] }> {
  const seen: IncomingMessage['headers'][] = [];
  const sockets = new Set<Socket>();
  const server = createHttpServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    res.writeHead(502, { 'content-type': 'text/plain' }).end('proxy');
  });
  return listen(server as unknown as Server, sockets).then((l) => ({ ...l, seen }));
}

/** A port nothing listens on (bound, then closed). */
export async function closedPort(): Promise<number> {
  const l = await listen(createServer(), new Set());
  await l.close();
  return l.port;
}

/**
 * A proxy in front of `serve` that passes every request on, and swallows the answers to every
 * `every`th spend entry it sees — on every connection that sends that entry, retries included — so
 * the spend lands and its client never hears. Requests are read whole (headers and body) before
 * they are passed on; a connection carries one request at a time, as the clients send them.
 */
export async function swallowingProxy(
  target: URL,
  every: number,
): Promise<Listening & { swallowed: () => number }> {
  const seen = new Set<string>();
  const swallow = new Set<string>();
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect({ port: Number(target.port), host: target.hostname, noDelay: true });
    client.setNoDelay(true);
    let buffer = Buffer.alloc(0);
    let mute = false;
    client.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buffer.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffer.length < end + 4 + length) return;
        const body = buffer.subarray(end + 4, end + 4 + length).toString('utf8');
        const request = buffer.subarray(0, end + 4 + length);
        buffer = buffer.subarray(end + 4 + length);
        const entry =
          head.startsWith('POST ') && / \/v1\/spend /.test(head)
            ? /"entry": *"([^"]+)"/.exec(body)?.[1]
            : undefined;
        if (entry !== undefined && !seen.has(entry)) {
          seen.add(entry);
          if (seen.size % every === 0) swallow.add(entry);
        }
        if (entry !== undefined && swallow.has(entry)) mute = true;
        upstream.write(request);
      }
    });
    upstream.on('data', (chunk) => {
      if (!mute) client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  return listen(server, sockets).then((l) => ({ ...l, swallowed: () => swallow.size }));
}
