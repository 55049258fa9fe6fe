/**
 * The connection table of the HTTP server that `run --http` and `serve` listen with: slow clients
 * cannot crowd out the rest.
 *
 * A connection is *busy* while a request on it is being answered, else *waiting*: just connected,
 * idle between kept-alive requests, or sending its next request's headers. Node's own limits close a
 * new connection whose headers do not arrive within `headersTimeout`, but not a kept-alive one that
 * trickles its next request's headers a byte at a time (its idle timer starts again with every
 * byte). Here, every second, a waiting connection that has received bytes since its last answer
 * (socket.bytesRead moved) without completing a request within `headersTimeout` is closed too.
 *
 * The table holds at most `max` connections. When a new one arrives and the table is full, the
 * connection that has been waiting longest — the oldest idle one, or the slowest to send its request
 * — is closed to make room, never the newcomer; only when every connection is busy is the newcomer
 * closed (by Node, as it is accepted: server.maxConnections is set while they all are). So 500
 * sockets that connect and send nothing (or a header line every few seconds, and reconnect when
 * closed) cannot keep a scraper, a health check or a spend out: each one that arrives takes the
 * place of the longest-waiting, and a legitimate client, which sends its request at once, becomes
 * busy before its turn to be shed comes.
 *
 * Connections are keyed by their remote address and port, which a TLS socket shares with the TCP
 * socket under it (the table tracks the TCP socket from the moment it is accepted, before any
 * handshake).
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionLimits {
  /** Open connections at most. */
  max: number;
  /** A waiting connection that has started a request must complete its headers within this (ms). */
  headersTimeout: number;
  /** How often waiting connections are looked at (ms). */
  checkEveryMs: number;
}

export interface ConnectionStats {
  /** Open now. */
  open: number;
  /** Open now with a request being answered. */
  busy: number;
  /** Closed to make room for a new connection, since the start. */
  shed: number;
  /** New connections closed because every open one was busy. */
  refused: number;
  /** Kept-alive connections closed for sending their next request's headers too slowly. */
  slow: number;
}

interface Tracked {
  socket: Socket;
  /** Requests being answered on it (HTTP/1.1 answers one at a time; pipelining may queue more). */
  busy: number;
  /** When it last became waiting: accepted, or its last answer finished. */
  since: number;
  /** socket.bytesRead when it last became waiting. */
  bytesAt: number;
  /** When bytes of a next request were first seen after its last answer. */
  headersFrom?: number;
}

export interface ConnectionTable {
  stats(): ConnectionStats;
  /** Stop looking at connections (the server is closing). */
  stop(): void;
}

const keyOf = (s: { remoteAddress?: string | undefined; remotePort?: number | undefined }): string =>
  `${s.remoteAddress ?? ''}|${s.remotePort ?? ''}`;

/** Track `server`'s connections with these limits (in place of `server.maxConnections`). */
export function limitConnections(server: Server, limits: ConnectionLimits): ConnectionTable {
  // Insertion order is the order in which connections became waiting: the first waiting one in the
  // map has waited longest (a connection moves to the end whenever it becomes waiting again).
  const table = new Map<string, Tracked>();
  const counts = { shed: 0, refused: 0, slow: 0 };
  // Connections with a request being answered. While all `max` are, there is nobody to shed: Node
  // itself closes newcomers as they are accepted (server.maxConnections), before it sets up a
  // parser for each, which a flood of them would otherwise pay for.
  let busyNow = 0;
  const gate = (): void => {
    server.maxConnections = busyNow >= limits.max ? limits.max : Number.POSITIVE_INFINITY;
  };
  gate();
  server.on('drop', () => {
    counts.refused++;
  });

  const waiting = (t: Tracked, key: string, now: number): void => {
    t.since = now;
    t.bytesAt = t.socket.bytesRead;
    delete t.headersFrom;
    table.delete(key);
    table.set(key, t);
  };

  const longestWaiting = (): Tracked | undefined => {
    for (const t of table.values()) if (t.busy === 0) return t;
    return undefined;
  };

  server.on('connection', (socket: Socket) => {
    if (table.size >= limits.max) {
      const victim = longestWaiting();
      if (!victim) {
        counts.refused++;
        socket.destroy();
        return;
      }
      counts.shed++;
      table.delete(keyOf(victim.socket));
      victim.socket.destroy();
    }
    const key = keyOf(socket);
    const t: Tracked = { socket, busy: 0, since: Date.now(), bytesAt: 0 };
    table.set(key, t);
    socket.once('close', () => {
      if (t.busy > 0) {
        t.busy = 0;
        busyNow--;
        gate();
      }
      if (table.get(key) === t) table.delete(key);
    });
  });

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const key = keyOf(req.socket);
    const t = table.get(key);
    if (!t) return;
    if (t.busy++ === 0) {
      busyNow++;
      gate();
    }
    let done = false;
    const finished = () => {
      if (done || t.busy === 0) return;
      done = true;
      if (--t.busy > 0) return;
      busyNow--;
      gate();
      if (table.get(key) === t) waiting(t, key, Date.now());
    };
    res.once('finish', finished);
    res.once('close', finished);
  });

  const timer = setInterval(() => {
    const now = Date.now();
    for (const t of table.values()) {
      // A new connection's headers are Node's (headersTimeout from the accept); a kept-alive
      // connection's next request is watched here.
      if (t.busy > 0 || t.bytesAt === 0) continue;
      if (t.headersFrom === undefined) {
        if (t.socket.bytesRead > t.bytesAt) t.headersFrom = now;
      } else if (now - t.headersFrom >= limits.headersTimeout) {
        counts.slow++;
        t.socket.destroy();
      }
    }
  }, limits.checkEveryMs);
  timer.unref();

  return {
    stats: () => ({ open: table.size, busy: busyNow, ...counts }),
    stop: () => clearInterval(timer),
  };
}
