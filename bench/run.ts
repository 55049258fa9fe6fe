/**
 * `npm run bench [-- section …]`: runs benchmark sections (default: all) and prints machine info
 * first, so figures can be compared side by side within one run. Sections live in bench/<name>.ts
 * and export `run(): Promise<void>`. Nothing under bench/ is imported by tests.
 */
import { cpus, freemem, totalmem } from 'node:os';

const SECTIONS = ['ledger', 'cache', 'upstream', 'cli', 'guard', 'api', 'serve-memory', 'serve-slow'];
/** Sections that run only when named: a soak of several minutes, an attack on a server. */
const ON_REQUEST = ['serve-memory', 'serve-slow'];

async function main(): Promise<void> {
  const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const unknown = wanted.filter((w) => !SECTIONS.includes(w));
  if (unknown.length) {
    console.error(`unknown section(s): ${unknown.join(', ')}; known: ${SECTIONS.join(', ')}`);
    process.exit(64);
  }
  const cpu = cpus();
  console.log(
    `# quota-guard bench — node ${process.version}, ${cpu.length} × ${cpu[0]?.model ?? '?'}, ` +
      `${(totalmem() / 2 ** 30).toFixed(1)} GiB (${(freemem() / 2 ** 30).toFixed(1)} free), ${new Date().toISOString()}`,
  );
  for (const name of wanted.length ? wanted : SECTIONS.filter((s) => !ON_REQUEST.includes(s))) {
    const mod = (await import(`./${name}.ts`)) as { run(): Promise<void> };
    console.log(`\n## ${name}\n`);
    await mod.run();
  }
}

await main();
