/**
 * Listening and closing for the two small HTTP servers (the simulator and the metrics endpoint), so
 * both name a taken or forbidden port the same way and close without waiting on idle keep-alives.
 */
import type { Server } from 'node:http';
import { InvalidArgumentError, QuotaGuardError } from './errors.js';

export interface Listening {
  /** `http://host:port`, with an IPv6 host in brackets. */
  origin: string;
  /** The bound port (the one the system chose when asked for 0). */
  port: number;
}

/**
 * Listens on `host:port`; a failure says why in one line, on `field`. A port in use is a passing
 * condition (another process has it, perhaps one that is stopping): `QG_ADDRESS_IN_USE`, exit 69,
 * so a service manager restarts the command. A forbidden address is a usage error (exit 64).
 */
export async function listen(server: Server, host: string, port: number, field: string): Promise<Listening> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EADDRINUSE') {
        reject(
          new QuotaGuardError(
            'QG_ADDRESS_IN_USE',
            `${field}: listening on ${host}:${port} is in use (another process holds it)`,
            { field },
          ),
        );
        return;
      }
      const why = e.code === 'EACCES' ? 'is not allowed' : `failed (${e.code})`;
      reject(new InvalidArgumentError(field, `listening on ${host}:${port} ${why}`));
    });
    server.listen(port, host, () => {
      server.removeAllListeners('error');
      resolve();
    });
  });
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : 0;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return { origin: `http://${hostPart}:${bound}`, port: bound };
}

/** Stops accepting and drops every open connection, resolving once the server has closed. */
export function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
