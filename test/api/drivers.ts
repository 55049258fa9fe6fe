/**
 * The Python and PHP clients driven through one scenario each (test/api/drivers/driver.{py,php}):
 * the same steps in both languages, the same results back, with each step's duration. And small
 * loopback servers the clients are tried against: one that never answers, one that serves the API
 * under a sub-path, one that stands as an HTTP proxy.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, request } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '../..');
export const CLIENT_DIR = { python: join(ROOT, 'clients/python'), php: join(ROOT, 'clients/php') } as const;
export const LANGS = ['python', 'php'] as const;
export type Lang = (typeof LANGS)[number];

export interface ClientSpec {
  url: string | string[];
  token?: string;
  failMode?: 'open' | 'closed';
  deadline?: number;
  timeout?: number;
  journal?: string | false;
  journalMaxBytes?: number;
  caFile?: string;
  proxy?: string;
}

export type Step =
  | {
      do: 'spend';
      name?: string;
      credential?: string;
      method?: string;
      bucket?: string;
      cost?: number;
      tag?: string;
      entry?: string;
      failMode?: 'open' | 'closed';
      deadline?: number;
    }
  | { do: 'settle'; name?: string; outcome: 'sent' | 'never-sent' | 'exhausted' }
  | { do: 'status' | 'replay' | 'close' }
  | { do: 'recordRun'; job: string; units?: number; id?: string; credential?: string }
  | { do: 'sleep'; ms: number };

export interface StepResult {
  do: string;
  ms: number;
  allowed?: boolean;
  reason?: string;
  entry?: string;
  replayed?: boolean;
  journalled?: 'record' | 'void' | null;
  ok?: boolean;
  n?: number;
  recorded?: boolean;
  credentials?: string[];
  error?: string;
  message?: string;
  status?: number;
}

export interface Driven {
  results: StepResult[];
  stderr: string;
  /** stderr's lines from the client (`quota-guard: …`). */
  said: string[];
  code: number;
}

/** A fresh directory for a client's journal (and HOME, so nothing lands in the real one). */
export function journalDir(): string {
  return mkdtempSync(join(tmpdir(), 'qg-journal-'));
}

/** Runs `steps` with the client of `lang`; HOME is a fresh directory unless `env` says otherwise. */
export function drive(
  lang: Lang,
  client: ClientSpec,
  steps: Step[],
  env: Record<string, string> = {},
): Promise<Driven> {
  const [cmd, script] =
    lang === 'python'
      ? ['python3', join(import.meta.dirname, 'drivers/driver.py')]
      : ['php', join(import.meta.dirname, 'drivers/driver.php')];
  return new Promise((resolve, reject) => {
    execFile(
      cmd,
      [script, JSON.stringify({ client, steps })],
      {
        env: { PATH: process.env['PATH'] ?? '', HOME: journalDir(), QG_CLIENT_DIR: CLIENT_DIR[lang], ...env },
        timeout: 120_000,
      },
      (error, stdout, stderr) => {
        const code = error ? Number((error as { code?: number }).code ?? 1) : 0;
        if (code !== 0) {
          reject(new Error(`${lang} driver exited ${code}: ${stderr}${stdout}`));
          return;
        }
        const said = stderr.split('\n').filter((l) => l.startsWith('quota-guard: '));
        resolve({ results: JSON.parse(stdout) as StepResult[], stderr, said, code });
      },
    );
  });
}

export interface JournalLine {
  id: string;
  op: 'record' | 'void' | 'report' | 'runs';
  tok: string | null;
  written: number;
  body: Record<string, unknown>;
}

/** The journal's lines (none when the file does not exist). */
export function journalLines(path: string): JournalLine[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as JournalLine);
}

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
