/**
 * `quota-guard completion bash|zsh`: scripts generated from the command tree. The bash one is run
 * in a real bash: what it completes for a few command lines is checked against the program's own
 * commands and options. zsh is checked for syntax when it is installed.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { cli, dir } from './helpers.js';

/** What the bash completion offers for a command line whose last word is being typed. */
function complete(script: string, line: string[], path = process.env['PATH'] ?? ''): string[] {
  const words = line.map((w) => `'${w}'`).join(' ');
  const r = spawnSync(
    'bash',
    [
      '-c',
      `source "$1"; COMP_WORDS=(${words}); COMP_CWORD=${line.length - 1}; _quota_guard; printf '%s\\n' "\${COMPREPLY[@]}"`,
      'bash',
      script,
    ],
    { encoding: 'utf8', env: { ...process.env, PATH: path, QUOTA_GUARD_CONFIG: '' } },
  );
  expect(r.stderr).toBe('');
  return r.stdout.split('\n').filter(Boolean);
}

const hasZsh = spawnSync('zsh', ['--version']).status === 0;
if (!hasZsh) console.warn('completion: the zsh syntax check is skipped, zsh is not installed');

describe('completion bash', () => {
  it('completes every command, its options, choices, and file names after --config', async () => {
    const out = await cli('completion', 'bash');
    expect(out.code).toBe(0);
    const script = `${dir}/completion.bash`;
    writeFileSync(script, out.stdout);
    expect(spawnSync('bash', ['-n', script]).status).toBe(0);

    const commands = buildProgram()
      .commands.map((c) => c.name())
      .filter((n) => n !== 'help' && !n.startsWith('__'));
    expect(commands).toEqual(expect.arrayContaining(['unblock', 'completion', 'status', 'fetch']));
    expect(complete(script, ['quota-guard', ''])).toEqual(expect.arrayContaining([...commands, '--version']));
    expect(complete(script, ['quota-guard', 'un'])).toEqual(['unblock']);
    expect(complete(script, ['quota-guard', 'spend', '--t'])).toEqual(['--tier', '--tag']);
    expect(complete(script, ['quota-guard', 'spend', '--tier', ''])).toEqual([
      'scheduled',
      'backfill',
      'manual',
    ]);
    expect(complete(script, ['quota-guard', 'fetch', '--d'])).toEqual(['--dry-run']);
    expect(complete(script, ['quota-guard', 'completion', ''])).toEqual(['bash', 'zsh']);
    writeFileSync(`${dir}/completion-target.yaml`, '');
    expect(complete(script, ['quota-guard', 'status', '--config', `${dir}/completion-tar`])).toEqual([
      `${dir}/completion-target.yaml`,
    ]);
  });
});

describe('completion of the config’s names', () => {
  it('offers the regions, credentials and buckets of the config the line names', async () => {
    const script = `${dir}/completion-names.bash`;
    writeFileSync(script, (await cli('completion', 'bash')).stdout);
    // `quota-guard` on PATH: this checkout's CLI, as an installed one would be.
    const bin = `${dir}/bin`;
    mkdirSync(bin, { recursive: true });
    writeFileSync(
      `${bin}/quota-guard`,
      `#!/bin/sh\nexec '${process.execPath}' --import tsx '${join(import.meta.dirname, '../../src/cli/bin.ts')}' "$@"\n`,
      { mode: 0o755 },
    );
    const path = `${bin}:${process.env['PATH'] ?? ''}`;
    const cfg = `${dir}/completion-names.yaml`;
    writeFileSync(cfg, 'regions: [US, GB, FR]\ncredentials:\n  - id: main\n  - id: spare\n');
    const c = ['--config', cfg];
    expect(complete(script, ['quota-guard', 'fetch', ...c, '--region', ''], path)).toEqual([
      'US',
      'GB',
      'FR',
    ]);
    expect(complete(script, ['quota-guard', 'fetch', ...c, '-r', 'G'], path)).toEqual(['GB']);
    expect(complete(script, ['quota-guard', 'status', ...c, '--credential', ''], path)).toEqual([
      'main',
      'spare',
    ]);
    expect(complete(script, ['quota-guard', 'spend', ...c, '--bucket', 'v'], path)).toEqual([
      'videos.insert',
      'videos.batchGetStats',
    ]);
    // Positional: unblock <credential> <bucket>.
    expect(complete(script, ['quota-guard', 'unblock', 's'], path)).toEqual([]);
    expect(complete(script, ['quota-guard', 'unblock', 'de'], path)).toEqual(['default']);
    expect(complete(script, ['quota-guard', 'unblock', 'default', 'sea'], path)).toEqual(['search.list']);
    // The hidden helper is no command a user is offered.
    expect(complete(script, ['quota-guard', '__'], path)).toEqual([]);
  });
});

describe('completion zsh', () => {
  it('describes every command and gives each its options', async () => {
    const out = await cli('completion', 'zsh');
    expect(out.code).toBe(0);
    expect(out.stdout.startsWith('#compdef quota-guard\n')).toBe(true);
    for (const c of buildProgram().commands.filter(
      (x) => x.name() !== 'help' && !x.name().startsWith('__'),
    )) {
      expect(out.stdout).toContain(`    '${c.name()}:`);
      expect(out.stdout).toContain(`    ${c.name()})\n      _arguments`);
    }
    expect(out.stdout).toContain("'--tier[priority tier]:tier:(scheduled backfill manual)'");
    expect(out.stdout).toMatch(/'\(-c --config\)'\{-c,--config\}'\[config file .*\]:file:_files'/);
    if (hasZsh) {
      const script = `${dir}/completion.zsh`;
      writeFileSync(script, out.stdout);
      expect(spawnSync('zsh', ['-n', script]).status).toBe(0);
    }
  });

  it('an unknown shell is a usage error', async () => {
    const out = await cli('completion', 'fish');
    expect(out.code).toBe(64);
    expect(out.stderr).toMatch(
      /value 'fish' is invalid for argument 'shell'\. Allowed choices are bash, zsh/,
    );
  });
});
