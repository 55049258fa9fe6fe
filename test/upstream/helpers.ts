/**
 * Loopback servers that misbehave on purpose, for the answers the simulator does not give (a
 * wrong-shaped body, a bare 403) and for transport failures below HTTP.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import net from 'node:net';

export const KEY = 'AIzaSy-test-SECRET-key-0123456789';

export interface Running {
  url: string;
  port: number;
  /** Requests the server received. */
  hits: number;
  close(): Promise<void>;
}

function running(server: Server | net.Server, sockets: Set<net.Socket>, scheme = 'http'): Promise<Running> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      const r: Running = {
        url: `${scheme}://127.0.0.1:${port}/youtube/v3`,
        port,
        hits: 0,
        close: () =>
          new Promise<void>((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      };
      resolve(r);
    });
  });
}

/** An HTTP server whose answers the test writes. */
export async function httpServer(
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<Running> {
  const sockets = new Set<net.Socket>();
  let r: Running | undefined;
  const server = createServer((req, res) => {
    if (r) r.hits++;
    handle(req, res);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  r = await running(server, sockets);
  return r;
}

/** A TCP server that hands each accepted socket to the test (no HTTP at all). */
export async function tcpServer(onSocket: (s: net.Socket) => void, scheme = 'http'): Promise<Running> {
  const sockets = new Set<net.Socket>();
  let r: Running | undefined;
  const server = net.createServer((s) => {
    if (r) r.hits++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    onSocket(s);
  });
  r = await running(server, sockets, scheme);
  return r;
}

/** A port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** Catches the rejection of `p` (failing the test when it resolves). */
export async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected the call to fail, it succeeded');
}

/**
 * An upstream that drips: 200 with headers at once, then one byte of a JSON page every `everyMs`,
 * for at most `maxBytes` bytes (bounded), never completing in a test's lifetime.
 */
export function drip(everyMs: number, maxBytes = 10_000) {
  return (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.flushHeaders();
    let sent = 0;
    const timer = setInterval(() => {
      if (sent >= maxBytes || res.destroyed) {
        clearInterval(timer);
        return;
      }
      res.write(sent === 0 ? '{' : ' ');
      sent++;
    }, everyMs);
    res.on('close', () => clearInterval(timer));
  };
}

/**
 * An upstream that streams `total` bytes of one endless JSON string, honouring backpressure, and
 * counts what the socket accepted in `sent.bytes` (chunked: no Content-Length to refuse early).
 */
export function flood(total: number, sent: { bytes: number }) {
  return (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const pump = () => {
      while (sent.bytes < total && !res.destroyed) {
        sent.bytes += chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', pump);
          return;
        }
      }
      if (!res.destroyed) res.end();
    };
    res.write('{"kind":"');
    pump();
  };
}
