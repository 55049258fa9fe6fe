/**
 * The systemd units and the crontab run the installed `quota-guard` (docs/operations.md, "Installing
 * on a server"), not a checkout's sources, and docs/operations.md shows the units as they are in
 * deploy/systemd/. test/packaging/installed-package.test.ts verifies the units with
 * `systemd-analyze` against a real install.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../harness/imports.js';

const read = (f: string) => readFileSync(join(ROOT, f), 'utf8');

describe('the deployment files', () => {
  it('docs/operations.md shows each systemd unit as deploy/systemd/ has it', () => {
    const blocks = [...read('docs/operations.md').matchAll(/```ini\n([\s\S]*?)```/g)].map((m) => m[1]);
    for (const unit of ['quota-guard.service', 'quota-guard-serve.service']) {
      const text = read(`deploy/systemd/${unit}`);
      expect(text).toMatch(/^ExecStart=quota-guard (run|serve) /m);
      expect(blocks, unit).toContain(text);
    }
  });

  it('the crontab and the README run the installed quota-guard, with its directory on PATH', () => {
    for (const f of ['jobs/crontab.example', 'README.md', 'docs/operations.md']) {
      const text = read(f);
      const jobs = text.split('\n').filter((l) => /^#?\s*\d+\s+\S+\s+\*\s+\*\s+\*/.test(l));
      expect(jobs.length, f).toBeGreaterThan(1);
      for (const line of jobs) {
        expect(line, f).toMatch(/ quota-guard (fetch|backfill)\b/);
        expect(line, f).not.toMatch(/npx|tsx|\/opt\/|dist\/cli/);
      }
      expect(text, f).toMatch(/^PATH=\/usr\/local\/bin:\/usr\/bin:\/bin$/m);
    }
  });
});
