import { describe, expect, it } from 'vitest';
import { driverProblem } from '../../src/sqlite/driver.js';

describe('which better-sqlite3 runs on which Node', () => {
  it('accepts 12 on Node 20 and 22, and 13 on 22, 24 and later', () => {
    for (const [node, driver] of [
      ['v20.19.0', '12.11.1'],
      ['v22.12.0', '12.11.1'],
      ['v22.23.3', '13.2.0'],
      ['v24.21.0', '13.2.0'],
      ['v26.12.1', '13.2.0'],
    ]) {
      expect(driverProblem(node!, driver!), `${node} ${driver}`).toBeUndefined();
    }
  });

  it('refuses 12 on Node 24 and later with one line saying how to get 13', () => {
    for (const node of ['v24.0.0', 'v24.21.0', 'v26.12.1']) {
      const problem = driverProblem(node, '12.11.1');
      expect(problem).toMatch(/^better-sqlite3 12\.11\.1 aborts Node 2[46]\.[\d.]+ processes/);
      expect(problem).toMatch(/npm install --no-save better-sqlite3@13/);
      expect(problem).not.toMatch(/\n/);
    }
  });
});
