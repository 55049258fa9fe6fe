/**
 * The Python and PHP clients driven through one scenario each (test/api/drivers/driver.{py,php}):
 * the same steps in both languages, the same results back, with each step's duration.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
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
