/**
 * The answers of the real YouTube Data API kept in test/fixtures/youtube/ (sources in its README),
 * and a loopback server that replays them. A replayable recording is named
 * `<HTTP status>-<what>.json`; `items-*.json` hold recorded resources, `discovery-*.json` the
 * API's discovery document.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { httpServer, type Running } from './helpers.js';

export const RECORDINGS_DIR = join(import.meta.dirname, '../fixtures/youtube');

/** Every data file in the recordings directory (the README aside). */
export function recordingFiles(): string[] {
  return readdirSync(RECORDINGS_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort();
}

export function recordingText(name: string): string {
  return readFileSync(join(RECORDINGS_DIR, name), 'utf8');
}

export function recordingJson<T = unknown>(name: string): T {
  return JSON.parse(recordingText(name)) as T;
}

/** The HTTP status a replayable recording was answered with (its name's prefix). */
export function recordedStatus(name: string): number {
  const m = /^(\d{3})-/.exec(name);
  if (!m) throw new Error(`${name}: not a replayable recording (no <status>- prefix)`);
  return Number(m[1]);
}

export interface Replay extends Running {
  /** Paths requested, in order (query included). */
  readonly paths: string[];
}

/**
 * A server that answers each request with the recording its route names: `routes` maps the path
 * after /youtube/v3/ (e.g. 'search', 'channels') to a recording file.
 */
export async function replayServer(routes: Record<string, string>): Promise<Replay> {
  const paths: string[] = [];
  const srv = await httpServer((req, res) => {
    const url = req.url ?? '/';
    paths.push(url);
    const route = url.slice('/youtube/v3/'.length).split('?')[0] ?? '';
    const name = routes[route];
    if (name === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":{"code":404,"message":"Not Found"}}');
      return;
    }
    const body = recordingText(name);
    res.writeHead(recordedStatus(name), {
      'content-type': 'application/json; charset=UTF-8',
      'content-length': String(Buffer.byteLength(body)),
    });
    res.end(body);
  });
  return Object.assign(srv, { paths });
}
