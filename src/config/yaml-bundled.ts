/**
 * yaml.ts as the CLI bundle has it (scripts/bundle-cli.mjs): the parser imported, so it is bundled
 * into the chunk that reads config files, which the commands load only when there is a file to read.
 * Only the bundle uses it: tsconfig.build.json keeps it out of dist/, where nothing would import it.
 */
import { parse } from 'yaml';

/** YAML (or JSON) text → its value. Throws the parser's error, with `linePos`, on a syntax error. */
export function parseYaml(text: string): unknown {
  return parse(text);
}
