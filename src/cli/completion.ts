/**
 * Shell completion scripts for bash and zsh, generated from commander's command tree: every
 * command, its options, the choices of an option or argument that has them, and file names after
 * `--config`. Nothing is listed by hand, so a new command or option completes as soon as it exists.
 * Regions, credentials and buckets come from the config as the shell completes: the script asks
 * `quota-guard __complete <kind>` (with the line's `--config`), so they follow the config file.
 */
import type { Command, Option } from 'commander';

/** What `__complete` lists: names from the config. */
export type ValueKind = 'regions' | 'credentials' | 'buckets';

/** The config names an option's value is one of: `--region`, `--credential`, `--bucket`. */
function optionKind(o: Option): ValueKind | undefined {
  return ({ '--region': 'regions', '--credential': 'credentials', '--bucket': 'buckets' } as const)[
    o.long as '--region'
  ];
}

/** The config names a positional argument is one of, by its name (`<credential>`, `<bucket>`). */
function argKind(name: string): ValueKind | undefined {
  return ({ region: 'regions', credential: 'credentials', bucket: 'buckets' } as const)[name as 'region'];
}

interface Spec {
  name: string;
  description: string;
  /** Every flag of every option (`-c`, `--config`), then `--help`. */
  flags: string[];
  /** Flags followed by a value, with the value's choices when it has them (`null`: a file name). */
  values: Array<{ flags: string[]; choices: readonly string[] | null; option: Option }>;
  /** Choices of the first argument, when it has them. */
  argChoices: readonly string[];
  /** Per positional argument (index from 0), the config names it takes, if any. */
  argKinds: Array<ValueKind | undefined>;
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
    argKinds: cmd.registeredArguments.map((a) => argKind(a.name())),
    options,
  };
}

function commandsOf(program: Command): Spec[] {
  return program.commands
    .filter((c) => c.name() !== 'help' && !(c as Command & { _hidden?: boolean })._hidden)
    .map(specOf);
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
                  : optionKind(v.option)
                    ? `COMPREPLY=($(compgen -W "$(${fn}_values ${optionKind(v.option)})" -- "$cur"))`
                    : 'COMPREPLY=()'
            }; return ;;`,
        )
        .join('\n');
      const args = c.argChoices.length
        ? `      if [[ $cur != -* && $COMP_CWORD -eq 2 ]]; then COMPREPLY=($(compgen -W ${words(c.argChoices)} -- "$cur")); return; fi\n`
        : c.argKinds
            .map((kind, i) =>
              kind
                ? `      if [[ $cur != -* && $COMP_CWORD -eq ${i + 2} ]]; then COMPREPLY=($(compgen -W "$(${fn}_values ${kind})" -- "$cur")); return; fi\n`
                : '',
            )
            .join('');
      return [
        `    ${c.name})`,
        ...(values ? ['      case "$prev" in', values, '      esac'] : []),
        `${args}      COMPREPLY=($(compgen -W ${words(c.flags)} -- "$cur")) ;;`,
      ].join('\n');
    })
    .join('\n');
  return `# ${name} completion for bash. Load it with: source <(${name} completion bash)
# or save it as /etc/bash_completion.d/${name}. Generated from the command tree by \`${name} completion bash\`.
# Regions, credentials or buckets from the config the line names (--config), else the usual one.
${fn}_values() {
  local i cfg=()
  for ((i = 2; i < COMP_CWORD; i++)); do
    case "\${COMP_WORDS[i]}" in -c|--config) cfg=(--config "\${COMP_WORDS[i+1]}") ;; esac
  done
  ${name} __complete "$1" "\${cfg[@]}" 2>/dev/null
}
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

/** zsh code adding the config's names of `kind` (from the line's --config, if any). */
function zshValues(name: string, kind: ValueKind): string {
  return `local -a v cfg; local i=\${words[(I)(-c|--config)]}; (( i )) && cfg=(--config \${words[i+1]}); v=(\${(f)"$(${name} __complete ${kind} $cfg 2>/dev/null)"}); compadd -a v`;
}

function zshOption(o: Option, name: string): string {
  const flags = flagsOf(o);
  const help = `[${zshText(o.description)}]`;
  let value = '';
  if (o.required || o.optional) {
    const label = zshText(o.flags.match(/[<[]([^>\]]+)[>\]]/)?.[1] ?? 'value');
    const kind = optionKind(o);
    const action =
      o.long === '--config'
        ? '_files'
        : o.argChoices
          ? `(${o.argChoices.map(zshText).join(' ')})`
          : kind
            ? `{${zshValues(name, kind)}}`
            : '';
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
      const specs = [...c.options.map((o) => zshOption(o, name)), "'--help[display help for command]'"];
      if (c.argChoices.length) specs.push(`'1:${c.name}:(${c.argChoices.map(zshText).join(' ')})'`);
      c.argKinds.forEach((kind, i) => {
        if (kind) specs.push(`'${i + 1}:${kind.slice(0, -1)}:{${zshValues(name, kind)}}'`);
      });
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
