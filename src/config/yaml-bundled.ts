/**
 * yaml.ts as the CLI bundle has it (scripts/bundle-cli.mjs): the parser imported, so it is bundled
 * into the chunk that reads config files, which the commands load only when there is a file to read.
 * Only the bundle uses it: tsconfig.build.json keeps it out of dist/, where nothing would import it.
 *
 * The bundle takes the package's ES module build (its `default` export condition, the one it gives
 * outside Node), from which it keeps only what `parseDocument` needs: about 2 ms less to load than
 * its CommonJS Node build, which comes whole. The two are built from the same source and differ in
 * one thing, how they report a warning: the Node build emits a process warning, the other calls
 * `console.warn`. This does what the Node build's `parse` does, step for step, and reports every
 * warning the Node build's way, so a user sees the same text from either.
 */
import { parseDocument } from 'yaml';

/** YAML (or JSON) text → its value. Throws the parser's error, with `linePos`, on a syntax error. */
export function parseYaml(text: string): unknown {
  const doc = parseDocument(text);
  for (const warning of doc.warnings) process.emitWarning(warning);
  if (doc.errors.length > 0) throw doc.errors[0];
  // Building the value warns of a key that is itself a collection, through console.warn here.
  const warn = console.warn;
  console.warn = (warning: string | Error) => process.emitWarning(warning);
  try {
    return doc.toJS();
  } finally {
    console.warn = warn;
  }
}
