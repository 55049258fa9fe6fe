/**
 * The `--http` address of `run` and `serve`: its default and its parser. Apart from the server
 * (server.ts), so that defining those commands does not load node:http.
 */
import { InvalidArgumentError } from './errors.js';

export const DEFAULT_HTTP_HOST = '127.0.0.1';
export const DEFAULT_HTTP_PORT = 9464;

export interface HttpAddress {
  host: string;
  port: number;
}

/** `9464`, `:9464`, `127.0.0.1:9464`, `[::1]:9464`, `localhost` → host and port (loopback by default). */
export function parseHttpAddress(value: string): HttpAddress {
  const v = value.trim();
  let host = DEFAULT_HTTP_HOST;
  let port = String(DEFAULT_HTTP_PORT);
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*))(?::(\d*))?$/.exec(v);
  if (/^\d+$/.test(v)) port = v;
  else if (m) {
    host = m[1] ?? (m[2] || DEFAULT_HTTP_HOST);
    if (m[3]) port = m[3];
  } else throw new InvalidArgumentError('--http', `'${value}' is not host:port`);
  const n = Number(port);
  if (!Number.isInteger(n) || n < 0 || n > 65_535) {
    throw new InvalidArgumentError('--http', `port must be 0–65535, got '${port}'`);
  }
  return { host, port: n };
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
