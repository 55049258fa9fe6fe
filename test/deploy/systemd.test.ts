/**
 * The systemd units in deploy/systemd/: `run` and `serve` read one data directory (a `serve` that
 * looked elsewhere would show an empty quota), restart on a passing failure (69: a store down, a
 * port in use; 66: no ledger yet) and not on a configuration or usage mistake, and the copies in
 * docs/operations.md are the files.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../harness/imports.js';

const UNITS = ['quota-guard.service', 'quota-guard-serve.service'];

function unit(name: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of readFileSync(join(ROOT, 'deploy/systemd', name), 'utf8').split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (m) out.set(m[1]!, [...(out.get(m[1]!) ?? []), m[2]!]);
  }
  return out;
}

describe('the systemd units', () => {
  it('run and serve share one data directory', () => {
    const [run, serve] = UNITS.map(unit) as [Map<string, string[]>, Map<string, string[]>];
    expect(run.get('ExecStart')![0]).toMatch(/ run /);
    expect(serve.get('ExecStart')![0]).toMatch(/ serve /);
    for (const u of [run, serve]) {
      expect(u.get('StateDirectory')).toEqual(['quota-guard']);
      expect(u.get('Environment')).toContain('QUOTA_GUARD_DATA=/var/lib/quota-guard');
      expect(u.get('User')).toEqual(['quota-guard']);
    }
    expect(serve.get('Environment')).toEqual(run.get('Environment'));
  });

  it('restart on 69 and 66, never on a configuration or usage error', () => {
    for (const name of UNITS) {
      const u = unit(name);
      expect(u.get('Restart'), name).toEqual(['on-failure']);
      const prevented = u.get('RestartPreventExitStatus')![0]!.split(/\s+/);
      expect(prevented.sort(), name).toEqual(['64', '78']);
      expect(prevented).not.toContain('69');
      expect(prevented).not.toContain('66');
    }
  });

  it('are the units docs/operations.md shows', () => {
    const doc = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
    for (const name of UNITS) {
      expect(doc, name).toContain(
        `\`\`\`ini\n${readFileSync(join(ROOT, 'deploy/systemd', name), 'utf8')}\`\`\``,
      );
    }
  });
  // `systemd-analyze verify` needs the units' `quota-guard` on PATH: test/packaging verifies them
  // against the command a packed tarball installs.
});
