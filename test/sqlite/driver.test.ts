import { describe, expect, it } from 'vitest';
import { chooseDriver, driverProblem, sqliteDriver } from '../../src/sqlite/driver.js';

const both = [
  { name: 'better-sqlite3-13', version: '13.2.0' },
  { name: 'better-sqlite3-12', version: '12.11.1' },
] as const;

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

  it('refuses 12 on Node 24 and later, and 13 on Node 20', () => {
    for (const node of ['v24.0.0', 'v24.21.0', 'v26.12.1']) {
      expect(driverProblem(node, '12.11.1')).toBe('better-sqlite3 12.11.1 aborts Node 24 and later');
    }
    expect(driverProblem('v20.19.0', '13.2.0')).toBe(
      'better-sqlite3 13.2.0 crashes Node 20.19.0 (it needs Node 22 or later)',
    );
  });

  it('picks 13 where it runs, else 12, whatever else is installed', () => {
    const pick = (node: string, installed: readonly { name: string; version: string }[]) =>
      chooseDriver(node, installed as Parameters<typeof chooseDriver>[1]);
    expect(pick('v20.20.2', both)).toEqual({ driver: both[1] });
    expect(pick('v22.23.3', both)).toEqual({ driver: both[0] });
    expect(pick('v24.21.0', both)).toEqual({ driver: both[0] });
    expect(pick('v26.12.1', both)).toEqual({ driver: both[0] });
    // Node 22 runs 12 too: a project whose 13 went missing still opens its stores.
    expect(pick('v22.23.3', [both[1]])).toEqual({ driver: both[1] });
    // By the version it holds, not by the alias' name.
    expect(pick('v24.21.0', [{ name: 'better-sqlite3-13', version: '12.11.1' }])).toHaveProperty('problem');
  });

  it('says in one line what is missing and what to run, in a project or a checkout', () => {
    const cases = [
      [
        'v24.21.0',
        [both[1]],
        /^no SQLite driver for Node 24\.21\.0: better-sqlite3 12\.11\.1 aborts Node 24 and later; better-sqlite3 13, an optional dependency of quota-guard, is not installed/,
      ],
      [
        'v20.20.2',
        [both[0]],
        /^no SQLite driver for Node 20\.20\.2: better-sqlite3 13\.2\.0 crashes Node 20\.20\.2 \(it needs Node 22 or later\); better-sqlite3 12, an optional dependency of quota-guard, is not installed/,
      ],
      ['v26.12.1', [], /^no SQLite driver for Node 26\.12\.1: better-sqlite3 13, an optional dependency/],
    ] as const;
    for (const [node, installed, start] of cases) {
      const r = chooseDriver(node, installed);
      if (!('problem' in r)) throw new Error(`${node}: chose ${r.driver.name}`);
      expect(r.problem).toMatch(start);
      expect(r.problem).toMatch(
        /run `npm install` where quota-guard is installed \(your project, or a checkout\)/,
      );
      expect(r.problem).not.toMatch(/\n/);
    }
  });

  it('loads the one this Node runs, from its alias', () => {
    const driver = sqliteDriver();
    expect(driver.name).toBe(
      Number(process.versions.node.split('.')[0]) >= 22 ? 'better-sqlite3-13' : 'better-sqlite3-12',
    );
    expect(driver.entry).toContain(`/node_modules/${driver.name}/`);
    const db = new driver.Database(':memory:');
    expect(db.prepare('SELECT 1 AS one').get()).toEqual({ one: 1 });
    db.close();
  });
});
