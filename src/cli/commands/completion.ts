/**
 * `quota-guard completion bash|zsh`: print a shell completion script generated from the command
 * tree (commands, options, choices, file names after --config).
 */
import { Argument, type Command } from 'commander';
import { action } from '../action.js';

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
