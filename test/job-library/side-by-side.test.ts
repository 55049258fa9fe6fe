import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { runSideBySide } from '../../src/runs/job-run.js';

describe('runSideBySide', () => {
  it('waits for every job before rethrowing the first error, so nothing is closed under a running job', async () => {
    let slowFinished = false;
    const slow = sleep(150).then(() => {
      slowFinished = true;
      return 'slow';
    });
    const broken = Promise.reject(new Error('a bug in one region'));
    await expect(runSideBySide([broken, slow])).rejects.toThrow('a bug in one region');
    expect(slowFinished).toBe(true);
  });

  it('returns the results in order when all succeed', async () => {
    expect(await runSideBySide([sleep(20).then(() => 1), Promise.resolve(2)])).toEqual([1, 2]);
  });
});
