/** `quota-guard completion` and `__complete`: the actions (declared in src/cli/commands/completion.ts). */
import type { Command } from 'commander';
import { bashCompletion, zshCompletion } from '../completion.js';
import { loadCliConfig } from '../config.js';
import type { ConfigOptions } from '../options.js';

/** The script for `shell`, generated from the program the command belongs to. */
export async function run(shell: 'bash' | 'zsh', _opts: unknown, command: Command): Promise<number> {
  const program = command.parent ?? command;
  process.stdout.write(shell === 'bash' ? bashCompletion(program) : zshCompletion(program));
  return 0;
}

/** The config's regions, credentials or buckets, one a line (nothing when the config does not load). */
export async function names(
  kind: 'regions' | 'credentials' | 'buckets',
  opts: ConfigOptions,
): Promise<number> {
  // A config that does not load lists nothing: completion has no place to say why.
  const config = await loadCliConfig(opts.config).catch(() => undefined);
  if (!config) return 0;
  const list =
    kind === 'regions'
      ? config.regions
      : kind === 'credentials'
        ? config.credentials.map((c) => c.id)
        : [...new Set(config.credentials.flatMap((c) => Object.keys(c.buckets)))];
  process.stdout.write(list.map((n) => `${n}\n`).join(''));
  return 0;
}
