/**
 * Listening and closing for the two small HTTP servers (the simulator and the metrics endpoint), so
 * both name a taken or forbidden port the same way and close without waiting on idle keep-alives;
 * and the listening socket a service manager hands over (systemd socket activation).
 */
import type { Server } from 'node:http';
import { Server as NetServer } from 'node:net';
import { InvalidArgumentError, QuotaGuardError } from './errors.js';

export interface Listening {
  /** `http://host:port`, with an IPv6 host in brackets. */
  origin: string;
  /** The bound host (the one of the inherited socket when there is one). */
  host: string;
  /** The bound port (the one the system chose when asked for 0). */
  port: number;
}

/** The first descriptor systemd passes (`SD_LISTEN_FDS_START`). */
const LISTEN_FDS_START = 3;

/**
 * The listening socket systemd passed to this process (socket activation: `LISTEN_PID` is this
 * process and `LISTEN_FDS` at least 1), as its file descriptor; undefined when there is none. The
 * variables are taken out of the environment, so that a process started from this one does not
 * think the socket is its own.
 */
export function inheritedListenFd(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const pid = env['LISTEN_PID'];
  const fds = Number(env['LISTEN_FDS'] ?? 0);
  if (pid === undefined) return undefined;
  delete env['LISTEN_PID'];
  delete env['LISTEN_FDS'];
  delete env['LISTEN_FDNAMES'];
  return pid === String(process.pid) && Number.isInteger(fds) && fds >= 1 ? LISTEN_FDS_START : undefined;
}

/**
 * Listens on `host:port`, or on the inherited socket `fd`; a failure says why in one line, on
 * `field`. A port in use is a passing condition (another process has it, perhaps one that is
 * stopping): `QG_ADDRESS_IN_USE`, exit 69, so a service manager restarts the command. A forbidden
 * address is a usage error (exit 64).
 */
export async function listen(
  server: Server,
  host: string,
  port: number,
  field: string,
  fd?: number,
): Promise<Listening> {
  const where = fd !== undefined ? `the socket passed as descriptor ${fd}` : `${host}:${port}`;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EADDRINUSE') {
        reject(
          new QuotaGuardError(
            'QG_ADDRESS_IN_USE',
            `${field}: listening on ${where} is in use (another process holds it)`,
            { field },
          ),
        );
        return;
      }
      const why = e.code === 'EACCES' ? 'is not allowed' : `failed (${e.code})`;
      reject(new InvalidArgumentError(field, `listening on ${where} ${why}`));
    });
    const ready = () => {
      server.removeAllListeners('error');
      resolve();
    };
    if (fd !== undefined) server.listen({ fd }, ready);
    else server.listen(port, host, ready);
  });
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : 0;
  const boundHost = fd !== undefined && typeof address === 'object' && address ? address.address : host;
  const hostPart = boundHost.includes(':') ? `[${boundHost}]` : boundHost;
  return { origin: `http://${hostPart}:${bound}`, host: boundHost, port: bound };
}

/** Stops accepting and drops every open connection, resolving once the server has closed. */
export function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * Stops accepting, lets the requests being answered finish (each answer says `Connection: close`
 * when its server is no longer listening, see src/metrics/server.ts) and closes idle connections,
 * for at most `graceMs`; then drops what is left. Idle connections are closed `settleMs` after the
 * listening socket: a connection accepted just before it closed may not have delivered its
 * request yet, and Node's own close would take it for idle and reset it. New connections wait in
 * the listening socket's queue when it is shared (socket activation): the next process answers
 * them.
 */
export function drainServer(server: Server, graceMs: number, settleMs = 250): Promise<void> {
  return new Promise<void>((resolve) => {
    const settle = setTimeout(() => server.closeIdleConnections(), settleMs);
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    settle.unref();
    timer.unref();
    // net.Server's close: stop accepting, without http.Server's closing of idle connections now.
    NetServer.prototype.close.call(server, () => {
      clearTimeout(settle);
      clearTimeout(timer);
      resolve();
    });
  });
}
