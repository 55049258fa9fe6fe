import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadedBy, ROOT } from '../harness/imports.js';

const COMMANDS = readdirSync(`${ROOT}/src/cli/commands`).filter((f) => f.endsWith('.ts'));

describe('the CLI loads only what a command uses', () => {
  it('starting the CLI (and --help) loads no store, config reader, job, logger, simulator, calendar or HTTP', () => {
    const { files, packages } = loadedBy('src/cli/bin.ts');
    const heavyPackages = [
      ...['ioredis', 'better-sqlite3', 'undici', 'zod', 'yaml', 'pino', 'prom-client', 'luxon'],
      'node:http',
    ];
    expect(
      [...packages].filter((p) => heavyPackages.includes(p) || p === 'node-cron' || p === 'cli-progress'),
    ).toEqual([]);
    const heavy = [...files].filter((f) =>
      /^src\/(ledger|guard\/guard|config\/load|config\/schema|youtube|drill|scheduler|history|metrics\/metrics)/.test(
        f,
      ),
    );
    expect(heavy).toEqual([]);
  });

  it('commands do not import each other, lazily either: shared options and helpers have their own modules', () => {
    expect(COMMANDS.length).toBeGreaterThan(5);
    for (const c of COMMANDS) {
      const { files } = loadedBy(`src/cli/commands/${c}`, { lazy: true });
      const others = [...files].filter(
        (f) => f.startsWith('src/cli/commands/') && f !== `src/cli/commands/${c}`,
      );
      expect(others, c).toEqual([]);
    }
  });

  it('only main.ts loads the command modules: renderers and helpers live outside commands/', () => {
    const sources = readdirSync(`${ROOT}/src`, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts') && !f.startsWith('cli/commands/'))
      .filter((f) => f !== 'cli/main.ts' && f !== 'cli/bin.ts');
    for (const f of sources) {
      const commands = [...loadedBy(`src/${f}`).files].filter((x) => x.startsWith('src/cli/commands/'));
      expect(commands, f).toEqual([]);
    }
  });
});
