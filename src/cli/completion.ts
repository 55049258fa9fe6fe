/**
 * Shell completion scripts for bash and zsh, generated from commander's command tree: every
 * command, its options, the choices of an option or argument that has them, and file names after
 * `--config`. Nothing is listed by hand, so a new command or option completes as soon as it exists.
 */
import type { Command, Option } from 'commander';

interface Spec {
  name: string;
  description: string;
  /** Every flag of every option (`-c`, `--config`), then `--help`. */
  flags: string[];
  /** Flags followed by a value, with the value's choices when it has them (`null`: a file name). */
  values: Array<{ flags: string[]; choices: readonly string[] | null; option: Option }>;
  /** Choices of the first argument, when it has them. */
  argChoices: readonly string[];
  options: readonly Option[];
}

function flagsOf(o: Option): string[] {
  return [o.short, o.long].filter((f): f is string => f !== undefined);
}

function specOf(cmd: Command): Spec {
  const options = cmd.options as readonly Option[];
  const values = options
    .filter((o) => o.required || o.optional)
    .map((o) => ({
      flags: flagsOf(o),
      choices: o.argChoices ?? (o.long === '--config' ? null : []),
      option: o,
    }));
  const first = cmd.registeredArguments[0];
  return {
    name: cmd.name(),
    description: cmd.description(),
    flags: [...options.flatMap(flagsOf), '--help'],
    values,
    argChoices: first?.argChoices ?? [],
    options,
  };
}

function commandsOf(program: Command): Spec[] {
  return program.commands.filter((c) => c.name() !== 'help').map(specOf);
}

/** A word list for bash's `compgen -W` (single-quoted). */
function words(list: readonly string[]): string {
  return `'${list.join(' ').replace(/'/g, `'\\''`)}'`;
}

/** A bash completion script: `source <(quota-guard completion bash)`. */
export function bashCompletion(program: Command): string {
  const name = program.name();
  const fn = `_${name.replace(/[^A-Za-z0-9]/g, '_')}`;
  const commands = commandsOf(program);
  const top = [...commands.map((c) => c.name), '--help', '--version'];
  const cases = commands
    .map((c) => {
      const values = c.values
        .map(
          (v) =>
            `        ${v.flags.join('|')}) ${
              v.choices === null
                ? 'COMPREPLY=($(compgen -f -- "$cur"))'
                : v.choices.length
                  ? `COMPREPLY=($(compgen -W ${words(v.choices)} -- "$cur"))`
                  : 'COMPREPLY=()'
            }; return ;;`,
        )
        .join('\n');
      const args = c.argChoices.length
        ? `      if [[ $cur != -* && $COMP_CWORD -eq 2 ]]; then COMPREPLY=($(compgen -W ${words(c.argChoices)} -- "$cur")); return; fi\n`
        : '';
      return [
        `    ${c.name})`,
        ...(values ? ['      case "$prev" in', values, '      esac'] : []),
        `${args}      COMPREPLY=($(compgen -W ${words(c.flags)} -- "$cur")) ;;`,
      ].join('\n');
    })
    .join('\n');
  return `# ${name} completion for bash. Load it with: source <(${name} completion bash)
# or save it as /etc/bash_completion.d/${name}. Generated from the command tree by \`${name} completion bash\`.
${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}"
  if [[ $COMP_CWORD -eq 1 ]]; then
    COMPREPLY=($(compgen -W ${words(top)} -- "$cur"))
    return
  fi
  case "\${COMP_WORDS[1]}" in
${cases}
  esac
}
complete -F ${fn} ${name}
`;
}

/** Text inside single quotes in zsh: a quote becomes ’. */
function zshQuoted(s: string): string {
  return s.replace(/'/g, '’');
}

/** A description inside `_arguments`' brackets: brackets and backslashes escaped. */
function zshText(s: string): string {
  return zshQuoted(s).replace(/([[\]\\])/g, '\\$1');
}

function zshOption(o: Option): string {
  const flags = flagsOf(o);
  const help = `[${zshText(o.description)}]`;
  let value = '';
  if (o.required || o.optional) {
    const label = zshText(o.flags.match(/[<[]([^>\]]+)[>\]]/)?.[1] ?? 'value');
    const action =
      o.long === '--config' ? '_files' : o.argChoices ? `(${o.argChoices.map(zshText).join(' ')})` : '';
    value = `:${label}:${action}`;
  }
  if (flags.length > 1) return `'(${flags.join(' ')})'{${flags.join(',')}}'${help}${value}'`;
  return `'${flags[0]}${help}${value}'`;
}

/** A zsh completion script: `source <(quota-guard completion zsh)` after compinit, or save it as `_quota-guard` in $fpath. */
export function zshCompletion(program: Command): string {
  const name = program.name();
  const fn = `_${name.replace(/[^A-Za-z0-9]/g, '_')}`;
  const commands = commandsOf(program);
  const described = commands.map((c) => `    '${c.name}:${zshQuoted(c.description)}'`).join('\n');
  const cases = commands
    .map((c) => {
      const specs = [...c.options.map(zshOption), "'--help[display help for command]'"];
      if (c.argChoices.length) specs.push(`'1:${c.name}:(${c.argChoices.map(zshText).join(' ')})'`);
      return `    ${c.name})\n      _arguments \\\n        ${specs.join(' \\\n        ')} ;;`;
    })
    .join('\n');
  return `#compdef ${name}
# ${name} completion for zsh. Load it with: source <(${name} completion zsh) (after compinit),
# or save it as _${name} in a directory of $fpath. Generated from the command tree by \`${name} completion zsh\`.
${fn}() {
  local -a commands
  commands=(
${described}
  )
  if (( CURRENT == 2 )); then
    _describe -t commands '${name} command' commands
    _arguments '(-V --version)'{-V,--version}'[print the version]' '(-h --help)'{-h,--help}'[display help]'
    return
  fi
  shift words
  (( CURRENT-- ))
  case $words[1] in
${cases}
  esac
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
  ${fn} "$@"
else
  compdef ${fn} ${name}
fi
`;
}
