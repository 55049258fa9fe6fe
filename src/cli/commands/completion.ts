/**
 * `quota-guard completion bash|zsh`: print a shell completion script generated from the command
 * tree (commands, options, choices, file names after --config). `__complete <kind>` (hidden) is what
 * the script runs as the shell completes: the config's regions, credentials or buckets, one a line.
 */
import { Argument, type Command } from 'commander';
import { action } from '../action.js';
import { type ConfigOptions, configOption } from '../options.js';

export function register(program: Command): void {
  program
    .command('completion')
    .description('print a shell completion script: source <(quota-guard completion bash) (or zsh)')
    .addArgument(new Argument('<shell>', 'bash or zsh').choices(['bash', 'zsh']))
    .action(
      action(async (shell: 'bash' | 'zsh') => {
        const { bashCompletion, zshCompletion } = await import('../completion.js');
        process.stdout.write(shell === 'bash' ? bashCompletion(program) : zshCompletion(program));
        return 0;
      }),
    );
}

/** `__complete <kind>`: the names the completion scripts offer, read from the config as they complete. */
export function registerNames(program: Command): void {
  configOption(
    program
      .command('__complete', { hidden: true })
      .description('list the config’s regions, credentials or buckets, for the completion scripts')
      .addArgument(new Argument('<kind>').choices(['regions', 'credentials', 'buckets'])),
  ).action(
    action(async (kind: 'regions' | 'credentials' | 'buckets', opts: ConfigOptions) => {
      const { loadCliConfig } = await import('../config.js');
      // A config that does not load lists nothing: completion has no place to say why.
      const config = await loadCliConfig(opts.config).catch(() => undefined);
      if (!config) return 0;
      const names =
        kind === 'regions'
          ? config.regions
          : kind === 'credentials'
            ? config.credentials.map((c) => c.id)
            : [...new Set(config.credentials.flatMap((c) => Object.keys(c.buckets)))];
      process.stdout.write(names.map((n) => `${n}\n`).join(''));
      return 0;
    }),
  );
}
