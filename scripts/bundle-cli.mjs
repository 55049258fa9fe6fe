/**
 * Bundles the CLI (`npm run build`, after tsc). A command run from a shell script pays Node's module
 * loader once per file it imports: the tsc output of `spend` is about 170 files (zod alone is 95),
 * and resolving, reading and compiling them was a third of its start-up. esbuild writes the entry
 * to dist/cli/bin.js (the package's bin, replacing tsc's) and what the commands import lazily to
 * chunks in dist/cli-chunks/, split at the dynamic imports, so a command reads a few dozen larger
 * files. The library (dist/index.js and the rest of tsc's output, with its types) is unchanged.
 *
 * Kept out of the bundle: better-sqlite3 (a native addon, found by its own loader; src/sqlite/driver.ts
 * requires it at run time under the alias of the major that runs on this Node), pino (its
 * transports run in worker threads that load pino's files by path; it is required at run time
 * through createRequire and loads from node_modules), and Luxon and node-cron, which
 * src/time-libs.ts requires the same way on the first call that needs them (in the bundle, even
 * unevaluated, they were 150 kB that every `spend` read and parsed); `status`, which always needs
 * both, imports them itself (src/cli/actions/status.ts), so they are bundled into its chunk. The YAML parser, which the library requires
 * the same way on first use (src/config/yaml.ts), is bundled: src/config/yaml-bundled.ts imports
 * it instead, into the chunk that reads config files; from node_modules it was about forty CommonJS
 * files to resolve and compile, 30-40 ms of CPU for every command run with a config file.
 *
 * The chunks sit two levels below the package root like tsc's files do, so `../../lua/` and
 * `../../package.json` relative to import.meta.url find the same files from either build.
 *
 * `node scripts/bundle-cli.mjs [dir]` writes to `<dir>/dist` instead (a test bundles into a
 * temporary package directory).
 */
import { deepStrictEqual } from 'node:assert';
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));

const outdir = resolve(process.argv[2] ?? root, 'dist');

/**
 * What the CLI's config schema returns for an empty config: the built-in defaults, validated and filled
 * in. The bundle embeds it (src/config/validated.ts), so a command run without a config file does
 * not load zod to compute it again. Taken from the schema itself, bundled here in memory.
 */
async function validatedDefaults() {
  const { outputFiles } = await build({
    absWorkingDir: root,
    stdin: {
      contents:
        "export { schemaOf } from './src/config/schema.ts'; export { youtubeConfigPart } from './src/youtube/config/part.ts';",
      resolveDir: root,
    },
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    write: false,
    // Run from a data: URL, which createRequire cannot resolve from: what src/time-libs.ts
    // requires on first use is found from the sources instead.
    define: { 'import.meta.url': JSON.stringify(pathToFileURL(resolve(root, 'src/time-libs.ts')).href) },
    logLevel: 'warning',
  });
  const code = Buffer.from(outputFiles[0].contents).toString('base64');
  // The CLI reads the core's keys and the YouTube application's (src/cli/config.ts).
  const { schemaOf, youtubeConfigPart } = await import(`data:text/javascript;base64,${code}`);
  const defaults = schemaOf([youtubeConfigPart]).parse({});
  // Embedded as JSON: it must hold nothing JSON would lose (undefined, a Date, a Map).
  deepStrictEqual(JSON.parse(JSON.stringify(defaults)), defaults);
  return defaults;
}

/** src/config/yaml.ts → src/config/yaml-bundled.ts: the YAML parser bundled, not required from node_modules. */
const bundledYaml = {
  name: 'bundled-yaml',
  setup(b) {
    b.onResolve({ filter: /^\.\/yaml\.js$/ }, (args) =>
      args.importer === resolve(root, 'src/config/load.ts')
        ? { path: resolve(root, 'src/config/yaml-bundled.ts') }
        : undefined,
    );
    // The package's ES module build, its export for any platform but Node (see yaml-bundled.ts).
    b.onResolve({ filter: /^yaml$/ }, (args) =>
      args.importer === resolve(root, 'src/config/yaml-bundled.ts')
        ? { path: resolve(root, 'node_modules/yaml/browser/index.js') }
        : undefined,
    );
  },
};

rmSync(resolve(outdir, 'cli-chunks'), { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: { 'cli/bin': 'src/cli/bin.ts' },
  outdir,
  chunkNames: 'cli-chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: ['better-sqlite3-12', 'better-sqlite3-13', 'pino'],
  // The CommonJS packages in the bundle (ioredis, commander, prom-client) call require() for
  // Node's built-in modules; an ES module has no require of its own.
  banner: {
    js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);",
  },
  plugins: [bundledYaml],
  minifySyntax: true,
  minifyWhitespace: true,
  sourcemap: true,
  // A string literal where the source names it (an object would become a module of its own).
  define: { QUOTA_GUARD_VALIDATED_DEFAULTS: JSON.stringify(JSON.stringify(await validatedDefaults())) },
  logLevel: 'warning',
});
