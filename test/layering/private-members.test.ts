import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../harness/imports.js';

describe('one convention for private members', () => {
  it('class members are private with #name, never with the TypeScript `private` or `protected` keyword', () => {
    const sources = readdirSync(`${ROOT}/src`, { recursive: true, encoding: 'utf8' }).filter((f) =>
      f.endsWith('.ts'),
    );
    const offenders: string[] = [];
    for (const f of sources) {
      readFileSync(`${ROOT}/src/${f}`, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (/^\s*(?:(?:static|readonly|override|async)\s+)*(?:private|protected)\s/.test(line))
            offenders.push(`src/${f}:${i + 1}: ${line.trim()}`);
          if (/constructor\([^)]*\b(?:private|protected)\s/.test(line))
            offenders.push(`src/${f}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(offenders).toEqual([]);
  });
});
