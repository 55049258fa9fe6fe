/**
 * `quota-guard completion bash|zsh`: print a shell completion script generated from the command
 * tree (commands, options, choices, file names after --config). `__complete <kind>` (hidden) is what
 * the script runs as the shell completes: the config's regions, credentials or buckets, one a line.
 */
import { Argument, type Command } from 'commander';
import { lazyAction } from '../action.js';
import { configOption } from '../options.js';

export function register(program: Command): void {
  program
    .command('completion')
    .description('print a shell completion script: source <(quota-guard completion bash) (or zsh)')
    .addArgument(new Argument('<shell>', 'bash or zsh').choices(['bash', 'zsh']))
    .action(lazyAction(() => import('../actions/completion.js')));
}

/** `__complete <kind>`: the names the completion scripts offer, read from the config as they complete. */
export function registerNames(program: Command): void {
  configOption(
    program
      .command('__complete', { hidden: true })
      .description('list the config’s regions, credentials or buckets, for the completion scripts')
      .addArgument(new Argument('<kind>').choices(['regions', 'credentials', 'buckets'])),
  ).action(lazyAction(async () => ({ run: (await import('../actions/completion.js')).names })));
}
