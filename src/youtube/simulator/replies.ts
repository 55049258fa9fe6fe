/**
 * How the simulator answers on the wire: each reply after the fault plan's latency, a JSON body with
 * its length, or a connection reset halfway through a body; the pending replies are cancelled on close.
 */
import type { ServerResponse } from 'node:http';
import { type ApiError, errorBody } from './envelope.js';

export class Replies {
  readonly #timers = new Set<NodeJS.Timeout>();

  readonly #latency: () => number;

  /** `latency()` is asked once per reply for its delay in ms (0 or less: at once). */
  constructor(latency: () => number) {
    this.#latency = latency;
  }

  send(
    res: ServerResponse,
    status: number,
    body: string | Buffer,
    headers: Record<string, string> = {},
  ): void {
    this.#later(() => {
      if (res.destroyed || res.headersSent) return;
      const buf = typeof body === 'string' ? Buffer.from(body) : body;
      res.writeHead(status, {
        'content-type': 'application/json; charset=UTF-8',
        'content-length': String(buf.length),
        ...headers,
      });
      res.end(buf);
    });
  }

  sendError(res: ServerResponse, e: ApiError, headers?: Record<string, string>): void {
    this.send(res, e.status, errorBody(e), headers);
  }

  /** Starts a 200 answer, then resets the connection after the first bytes of its body. */
  reset(res: ServerResponse): void {
    this.#later(() => {
      const socket = res.socket;
      if (res.destroyed || !socket) return;
      res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8', 'content-length': '65536' });
      res.write('{"kind":"youtube#videoListResponse","items":[', () => socket.resetAndDestroy());
    });
  }

  /** Drops every reply not yet sent. */
  cancel(): void {
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
  }

  #later(fn: () => void): void {
    const ms = this.#latency();
    if (ms <= 0) {
      fn();
      return;
    }
    const t = setTimeout(() => {
      this.#timers.delete(t);
      fn();
    }, ms);
    this.#timers.add(t);
  }
}
