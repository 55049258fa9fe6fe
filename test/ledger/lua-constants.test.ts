import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXPIRY_SLACK_MS, OUTSIDE_TAG_PREFIX } from '../../src/ledger/backend.js';
import { LedgerCode } from '../../src/ledger/codes.js';
import { VOID_MARK } from '../../src/ledger/remembered.js';
import { LUA_DIR } from '../../src/ledger/scripts.js';

// The Lua scripts cannot import TypeScript: lua/includes/base.lua repeats the numbers both sides
// must agree on. This keeps the two copies equal.
const base = readFileSync(`${LUA_DIR}includes/base.lua`, 'utf8');

function luaLocals(prefix: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of base.matchAll(new RegExp(`^local (${prefix}\\w*) = (-?\\d+)\\s*$`, 'gm'))) {
    out.set(m[1]!, Number(m[2]));
  }
  return out;
}

const snake = (name: string) => name.replace(/(?<=[a-z])(?=[A-Z])/g, '_').toUpperCase();

describe('lua/includes/base.lua mirrors the TypeScript constants', () => {
  it('has one CODE_ local per LedgerCode, with the same number, and no other', () => {
    const lua = luaLocals('CODE_');
    const ts = new Map(Object.entries(LedgerCode).map(([k, v]) => [`CODE_${snake(k)}`, v]));
    expect(lua.size).toBeGreaterThan(0);
    expect(Object.fromEntries(lua)).toEqual(Object.fromEntries(ts));
  });

  it('keeps keys for the same slack after their window', () => {
    expect(luaLocals('EXPIRY_SLACK_MS').get('EXPIRY_SLACK_MS')).toBe(EXPIRY_SLACK_MS);
  });

  it('marks a remembered void the same way', () => {
    expect(luaLocals('VOID_MARK').get('VOID_MARK')).toBe(VOID_MARK);
  });

  it('splits outside spend by the same tag prefix in lua/per-minute-2.lua', () => {
    const perMinute = readFileSync(`${LUA_DIR}per-minute-2.lua`, 'utf8');
    expect(/^local OUTSIDE_TAG_PREFIX = '([^']*)'$/m.exec(perMinute)?.[1]).toBe(OUTSIDE_TAG_PREFIX);
  });
});
