/**
 * The YAML parser, loaded on first use: the library's root exports loadConfig, and importing the
 * library or running a command on the built-in defaults does not load it. The CLI bundle replaces
 * this module with yaml-bundled.ts (scripts/bundle-cli.mjs), so there the parser comes inside the
 * chunk that reads config files instead of as the forty-odd CommonJS files of its package.
 */
import { createRequire } from 'node:module';
import type YAML from 'yaml';

const require = createRequire(import.meta.url);

/** YAML (or JSON) text → its value. Throws the parser's error, with `linePos`, on a syntax error. */
export function parseYaml(text: string): unknown {
  return (require('yaml') as typeof YAML).parse(text);
}
