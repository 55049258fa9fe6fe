/**
 * The library examples of README.md and docs/*.md: every fenced block whose info string is
 * `ts example` or `js example`. test/docs/examples.test.ts runs them from the sources under tsx;
 * test/packaging runs them as written, with the Node under test, in a project that installed the
 * package.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../harness/imports.js';

export interface Example {
  file: string;
  line: number;
  lang: 'ts' | 'js';
  code: string;
}

/** Fenced blocks whose info string is `ts example` or `js example`. */
export function examplesIn(file: string): Example[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const out: Example[] = [];
  const fence = /^```(ts|js) example[^\n]*\n([\s\S]*?)^```$/gm;
  for (let m = fence.exec(text); m; m = fence.exec(text)) {
    out.push({
      file,
      line: text.slice(0, m.index).split('\n').length,
      lang: m[1] as 'ts' | 'js',
      code: m[2]!,
    });
  }
  return out;
}

export const DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

export const EXAMPLES = DOCS.flatMap(examplesIn);

/** The config an example finds in $QUOTA_GUARD_CONFIG: `store` (indented lines), a cache, the simulator. */
export function exampleConfig(store: string, dir: string, upstream: string): string {
  return (
    `store:\n${store}cache:\n  path: ${join(dir, 'cache.db')}\nupstream:\n  baseUrl: ${upstream}\n` +
    'credentials:\n  - id: default\n    apiKeyEnv: YOUTUBE_API_KEY\n'
  );
}

/** The variables an example's user would have set, beside the config. */
export function exampleEnv(config: string, dir: string, upstream: string): NodeJS.ProcessEnv {
  return {
    QUOTA_GUARD_CONFIG: config,
    QUOTA_GUARD_DATA: dir,
    YOUTUBE_API_KEY: 'docs-example-key',
    OTHER_API_URL: upstream,
  };
}
