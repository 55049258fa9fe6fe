/**
 * The `quota-guard` CLI. Each command is declared in src/cli/commands/<name>.ts, which exports
 * `register(program)`; what it does is in src/cli/actions/<name>.ts, loaded when it runs, and what it
 * prints in src/cli/render/. Errors become one clear line on stderr and the exit code of their `code`
 * (see src/errors.ts); only bugs print a stack trace.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError, Help } from 'commander';
import { ExitCode } from '../errors.js';
import { exitCodeOf, reportError } from './action.js';
import { register as backfill } from './commands/backfill.js';
import { register as completion, registerNames as completionNames } from './commands/completion.js';
import { register as demo } from './commands/demo.js';
import { register as drill } from './commands/drill.js';
import { register as fetch } from './commands/fetch.js';
import { register as history } from './commands/history.js';
import { register as migrate } from './commands/migrate.js';
import { register as plan } from './commands/plan.js';
import { register as reconcile } from './commands/reconcile.js';
import { register as run } from './commands/run.js';
import { register as search } from './commands/search.js';
import { register as serve } from './commands/serve.js';
import { register as simulate } from './commands/simulate.js';
import { register as spend } from './commands/spend.js';
import { register as status } from './commands/status.js';
import { register as unblock } from './commands/unblock.js';
import { chooseLogFormat, logLevel } from './log-level.js';
import { outputWidth } from './render/format.js';

/** Fewer columns than this beside a term, and its description goes on the lines under it. */
const MIN_DESCRIPTION = 32;

/**
 * Help within the terminal's width (COLUMNS, else 100 off a terminal), at every level: a
 * description wraps at a word beside its term, or under it when the terms leave it too little room.
 */
function helpWithin(width: number): Partial<Help> {
  return {
    helpWidth: width,
    minWidthToWrap: MIN_DESCRIPTION,
    formatItem(this: Help, term, termWidth, description, helper) {
      if (!description || width - termWidth - 4 >= MIN_DESCRIPTION)
        return Help.prototype.formatItem.call(this, term, termWidth, description, helper);
      const under = helper.boxWrap(description, width - 6).replace(/\n/g, '\n      ');
      return `  ${term}\n      ${under}`;
    },
  };
}

/** The package's version (package.json is two levels up from src/cli and from dist/cli). */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

/**
 * The program with its commands. Given the command line, and its first word names a command, only
 * that command is defined: a script that runs `spend` should not pay for defining the other
 * thirteen. Anything else (`--help`, `help <command>`, a mistyped name that gets a suggestion,
 * `completion`, which writes every command into the script) defines them all.
 */
export function buildProgram(argv?: readonly string[]): Command {
  const program = new Command('quota-guard')
    .description('Guard a quota-metered API: budget ledger, jobs, cache search and an upstream simulator')
    .version(packageVersion(), '-V, --version', 'print the version of quota-guard')
    // A usage mistake is one line, in the format of every other error.
    .configureOutput({
      outputError: (str, write) =>
        write(
          `quota-guard: ${str
            .replace(/^error: /, '')
            .trim()
            .replace(/\s*\n\s*/g, ' ')} (run with --help for usage)\n`,
        ),
    })
    .exitOverride()
    .configureHelp(helpWithin(outputWidth()))
    // Before any command does anything (opens a store, starts a server): a bad LOG_LEVEL is a
    // configuration error, not a crash halfway through.
    .hook('preAction', (_program, command) => {
      logLevel();
      chooseLogFormat(
        command.opts()['json'] === true,
        process.env,
        process.stderr.isTTY === true,
        command.name(),
      );
    });
  const name = argv?.[2];
  const one = name !== undefined && name !== 'completion' && Object.hasOwn(COMMANDS, name);
  for (const register of one ? [COMMANDS[name]!] : Object.values(COMMANDS)) register(program);
  return program;
}

// Commands register themselves here (one import line each), under the name they define.
const COMMANDS: Record<string, (p: Command) => void> = {
  status,
  spend,
  simulate,
  fetch,
  backfill,
  search,
  demo,
  plan,
  run,
  drill,
  history,
  unblock,
  migrate,
  serve,
  reconcile,
  completion,
  // What the completion scripts run as the shell completes (hidden).
  __complete: completionNames,
};

export async function main(argv: string[] = process.argv): Promise<number> {
  const program = buildProgram(argv);
  try {
    await program.parseAsync(argv);
    return exitCodeOf(program) ?? ExitCode.OK;
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version end here with exit code 0; usage mistakes with 64.
      return e.exitCode === 0 ? ExitCode.OK : ExitCode.USAGE;
    }
    return reportError(e);
  }
}
