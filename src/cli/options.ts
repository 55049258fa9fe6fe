/**
 * Options and argument parsers shared by several commands. Like every module a command imports at
 * the top, it loads nothing but commander: what an action needs is imported when it runs.
 */
import { type Command, InvalidArgumentError } from 'commander';

export interface ConfigOptions {
  config?: string;
}

/** Adds `-c, --config <file>` to a command. */
export function configOption(cmd: Command): Command {
  return cmd.option(
    '-c, --config <file>',
    'config file (default: $QUOTA_GUARD_CONFIG, else the built-in defaults)',
  );
}

/** The options every job command (fetch, backfill, run) takes. */
export interface JobCommandOptions extends ConfigOptions {
  credential?: string;
  json?: boolean;
}

/** Adds what every job command (fetch, backfill, run) takes: `--credential <id>` and `-c, --config <file>`. */
export function jobOptions(cmd: Command): Command {
  return configOption(
    cmd.option('--credential <id>', 'the credential the jobs spend (default: the first in the config)'),
  );
}

/** Collects a repeatable option (`-r US -r GB`) into a list. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** The decision API's caller options, one wording for `run` and `serve`. */
export function callerOptions(command: Command): Command {
  return command
    .option(
      '--allow-host <names>',
      'a host name the decision API answers to besides IP addresses and localhost (repeatable, or a comma list)',
      collect,
      [],
    )
    .option(
      '--allow-origin <origins>',
      'a web origin whose pages may call the decision API (repeatable; none by default)',
      collect,
      [],
    );
}

/** A commander option parser for an integer >= `min`: the one wording of every count option. */
export function integerAtLeast(min: number): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value) || Number(value) < min)
      throw new InvalidArgumentError(`must be an integer >= ${min}`);
    return Number(value);
  };
}

/** Parses a command-line argument as an integer >= 1 (a commander option parser). */
export const parsePositiveInt = integerAtLeast(1);
