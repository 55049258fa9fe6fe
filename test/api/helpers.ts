/**
 * A real `quota-guard serve --decisions` process for the decision API's tests, and a keep-alive
 * JSON client that checks every answer against docs/openapi.yaml.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import YAML from 'yaml';
import { cli } from '../cli/helpers.js';
import { tmpPath } from '../job-library/helpers.js';
import { checkAnswer } from './openapi.js';

const BIN = new URL('../../src/cli/bin.ts', import.meta.url).pathname;

export interface Served {
  url: string;
  child: ChildProcess;
  stderr: () => string;
  stop(): Promise<void>;
}

/** A run as `quota-guard history --json` lists it (the fields the tests read). */
export interface HistoryRun {
  job: string;
  client?: string;
  outcome: string;
  pages: number;
  units: number;
  videos: number;
  reason: string | null;
  startedAt: number;
  used: Record<string, number>;
}

/** The runs `quota-guard history --json --config <config> [args]` lists, newest first. */
export async function historyRuns(config: string, ...args: string[]): Promise<HistoryRun[]> {
  const r = await cli('history', '--json', '--config', config, ...args);
  if (r.code !== 0) throw new Error(`history exited ${r.code}: ${r.stderr}`);
  return (JSON.parse(r.stdout) as { runs: HistoryRun[] }).runs;
}

export function writeConfig(config: Record<string, unknown>): string {
  const p = tmpPath('config.yaml');
  writeFileSync(p, YAML.stringify(config));
  return p;
}

export interface TokenSpec {
  name: string;
  credentials: string[];
  tiers?: string[];
  mayBlock?: boolean;
}

/** A tokens file with a fresh secret per token; returns the file and the secrets by name. */
export function tokensFile(
  specs: TokenSpec[],
  file = tmpPath('tokens.yaml'),
): {
  file: string;
  secrets: Record<string, string>;
} {
  // Names are data: a token may be called `__proto__`.
  const secrets: Record<string, string> = Object.create(null);
  const tokens = specs.map((s) => {
    const secret = randomBytes(18).toString('base64url');
    secrets[s.name] = secret;
    return { ...s, sha256: createHash('sha256').update(secret).digest('hex') };
  });
  writeFileSync(file, YAML.stringify({ tokens }));
  return { file, secrets };
}

/** `quota-guard serve --decisions` on a free loopback port (or `listen`), until `stop`. */
export async function startServe(
  config: string,
  extra: string[] = [],
  env: NodeJS.ProcessEnv = {},
  listen = '127.0.0.1:0',
): Promise<Served> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', BIN, 'serve', '--config', config, '--http', listen, '--decisions', ...extra],
    { env: { ...process.env, LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 30_000;
  const listening = () => /decision API at (https?:\/\/127\.0\.0\.1:\d+)\/v1\//.exec(stderr);
  let m = listening();
  for (; !m; m = listening()) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`serve did not start: ${stderr}`);
    }
    await sleep(20);
  }
  return {
    url: m[1]!,
    child,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface Answer {
  status: number;
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

/** One keep-alive connection (a job process's), JSON in and out, answers checked against the document. */
export class ApiClient {
  readonly #pool: Pool;
  readonly #token: string | undefined;

  constructor(url: string, token?: string) {
    this.#pool = new Pool(url, { connections: 1 });
    this.#token = token;
  }

  async call(method: 'GET' | 'POST', path: string, body?: unknown, raw?: string): Promise<Answer> {
    const r = await this.#pool.request({
      method,
      path,
      headers: {
        'content-type': 'application/json',
        ...(this.#token ? { authorization: `Bearer ${this.#token}` } : {}),
      },
      ...(raw !== undefined ? { body: raw } : body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await r.body.text();
    const parsed = JSON.parse(text) as unknown;
    checkAnswer(method, path.split('?')[0]!, r.statusCode, parsed);
    return { status: r.statusCode, body: parsed, headers: r.headers };
  }

  spend(body: Record<string, unknown>) {
    return this.call('POST', '/v1/spend', body);
  }

  report(body: Record<string, unknown>) {
    return this.call('POST', '/v1/report', body);
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}
