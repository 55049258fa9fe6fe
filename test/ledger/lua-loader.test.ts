import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadScripts } from '../../src/ledger/scripts.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A lua/ directory holding `files` (paths relative to it). */
function luaDir(files: Record<string, string>): string {
  dir = mkdtempSync(join(tmpdir(), 'qg-lua-'));
  mkdirSync(join(dir, 'includes'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return `${dir}/`;
}

describe('the Lua loader', () => {
  it('reads the key count from the file name, none for a script whose caller passes it', () => {
    const byFile = new Map(loadScripts().map((s) => [s.file, s.keys]));
    expect(byFile.get('peek-2')).toBe(2);
    expect(byFile.get('block-1')).toBe(1);
    expect(byFile.has('spend')).toBe(true);
    expect(byFile.get('spend')).toBeUndefined();
  });

  it('inlines an include at each line that asks for it, nested includes too', () => {
    const d = luaDir({
      'a-1.lua': 'if x then\n  --- @include "f"\nelse\n  --- @include "g"\nend\n',
      'includes/f.lua': '--- @include "h"\nlocal f = 1',
      'includes/g.lua': '--- @include "h"\nlocal g = 2',
      'includes/h.lua': 'local h = 3',
    });
    const [a] = loadScripts(d);
    expect(a?.lua).toBe('if x then\nlocal h = 3\nlocal f = 1\nelse\nlocal h = 3\nlocal g = 2\nend\n');
  });

  it('names the file that asked for a missing include, and the chain of a cycle', () => {
    expect(() => loadScripts(luaDir({ 'a.lua': '--- @include "nope"\n' }))).toThrow(
      'lua/a.lua: @include "nope": there is no lua/includes/nope.lua',
    );
    const cyclic = luaDir({
      'b.lua': '--- @include "x"\n',
      'includes/x.lua': '--- @include "y"\n',
      'includes/y.lua': '--- @include "x"\n',
    });
    expect(() => loadScripts(cyclic)).toThrow('lua/includes/y.lua: @include "x" is a cycle (x → y → x)');
    // A broken install is a typed internal error (exit 70), not a plain Error.
    expect(() => loadScripts(cyclic)).toThrow(expect.objectContaining({ code: 'QG_INTERNAL' }));
  });
});
