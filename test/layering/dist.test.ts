/**
 * What `npm run build` compiles into dist/ (tsconfig.build.json) is what the package ships. A module
 * that no other module imports, not even for its types, and that is not one of the package's
 * entries, is dead weight there: nothing can load it (the package's exports map allows only the
 * entries). The CLI bundle's stand-ins (scripts/bundle-cli.mjs swaps src/config/yaml.ts for
 * yaml-bundled.ts while bundling) are such modules: they belong to the bundle, not to dist.
 * Each area's index.ts is exempt: it is that area's surface, which the layering tests load.
 */
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../harness/imports.js';

/** The package's entries: its exports and its bin (as sources). */
const ENTRIES = ['src/index.ts', 'src/youtube/index.ts', 'src/youtube/simulator/index.ts', 'src/cli/bin.ts'];

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.[^'"]+)['"]/gm;

function builtSources(): string[] {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    resolve(ROOT, 'tsconfig.build.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  );
  if (parsed === undefined) throw new Error('tsconfig.build.json could not be read');
  return parsed.fileNames.map((f) => relative(ROOT, f)).filter((f) => !f.endsWith('.d.ts'));
}

describe('the build', () => {
  it('compiles no module that nothing in the package imports', () => {
    const sources = builtSources();
    expect(sources).toContain('src/cli/bin.ts');
    const imported = new Set<string>();
    for (const file of sources) {
      const text = readFileSync(resolve(ROOT, file), 'utf8');
      for (const m of text.matchAll(SPECIFIER)) {
        imported.add(relative(ROOT, resolve(ROOT, dirname(file), m[1]!.replace(/\.js$/, '.ts'))));
      }
    }
    const unreachable = sources.filter(
      (f) => !ENTRIES.includes(f) && !f.endsWith('/index.ts') && !imported.has(f),
    );
    expect(unreachable).toEqual([]);
  });
});
