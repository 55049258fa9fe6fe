/**
 * main() runs in-process (tests, scripts embedding the CLI): its exit code is its return value and it
 * leaves no state on `process` for the next call or for the host process's own exit status.
 */
import { describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.js';
import { configFile, sqliteStore } from './helpers.js';

describe('main() in-process', () => {
  it('returns a denial as 75 without setting process.exitCode, and the next call starts clean', async () => {
    const cfg = configFile(
      [
        `store: "${sqliteStore()}"`,
        'credentials:',
        '  - id: main',
        '    buckets:',
        '      units: { quota: 10 }',
        '',
      ].join('\n'),
    );
    const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      expect(process.exitCode).toBeUndefined();
      const spend = (cost: string) =>
        main(['node', 'quota-guard', 'spend', 'main', '--cost', cost, '--tier', 'manual', '--config', cfg]);
      expect(await spend('10')).toBe(0);
      expect(await spend('1')).toBe(75);
      expect(process.exitCode).toBeUndefined();
      expect(await main(['node', 'quota-guard', 'status', '--config', cfg])).toBe(0);
    } finally {
      write.mockRestore();
      process.exitCode = undefined;
    }
  });
});
