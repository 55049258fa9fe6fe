/**
 * Every type a public signature names can be imported by its user: walked with TypeScript's checker
 * from each entry point's exports (functions' parameters and results, interfaces' and classes'
 * public members, type aliases, constants), every named type declared in src/ that a signature
 * reaches must be exported by that entry point or by the package root. A type reached only through
 * another exported type is not walked twice: it is checked where it is exported.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../harness/imports.js';

/** The package's entry points (package.json's `exports`), as the sources their types are built from. */
const ENTRIES: Record<string, string> = Object.fromEntries(
  Object.entries(
    (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, unknown> })
      .exports,
  ).flatMap(([path, target]) => {
    const types = (target as { types?: string }).types;
    return types
      ? [[join('quota-guard', path), types.replace(/^\.\/dist\//, 'src/').replace(/\.d\.ts$/, '.ts')]]
      : [];
  }),
);

const SRC = join(ROOT, 'src');

function program(): ts.Program {
  const file = ts.findConfigFile(ROOT, ts.sys.fileExists, 'tsconfig.json')!;
  const { config } = ts.readConfigFile(file, ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, ROOT);
  return ts.createProgram(
    Object.values(ENTRIES).map((f) => join(ROOT, f)),
    { ...options, noEmit: true },
  );
}

/** Where a public type is missing: the type, the file declaring it, the entry and the path to it. */
interface Missing {
  type: string;
  declaredIn: string;
  entry: string;
  via: string;
}

function unexportedTypes(): Missing[] {
  const p = program();
  const checker = p.getTypeChecker();
  const resolve = (s: ts.Symbol) => (s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s);
  const exportsOf = (entry: string) => {
    const module = checker.getSymbolAtLocation(p.getSourceFile(join(ROOT, ENTRIES[entry]!))!)!;
    return checker.getExportsOfModule(module).map((s) => ({ name: s.name, symbol: resolve(s) }));
  };
  expect(Object.keys(ENTRIES)).toContain('quota-guard');
  const rootExports = new Set(exportsOf('quota-guard').map((e) => e.symbol));
  const ours = (s: ts.Symbol | undefined) =>
    s?.declarations?.some((d) => d.getSourceFile().fileName.startsWith(SRC)) === true;
  const named = (s: ts.Symbol) =>
    (s.flags &
      (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Class | ts.SymbolFlags.Enum)) !==
    0;

  const missing: Missing[] = [];
  for (const entry of Object.keys(ENTRIES)) {
    const exported = new Set([...rootExports, ...exportsOf(entry).map((e) => e.symbol)]);
    const seen = new Set<ts.Type>();
    const reported = new Set<ts.Symbol>();

    /** A named type of ours: importable, or reported. Walked no further (its export is walked itself). */
    const require = (s: ts.Symbol, via: string): void => {
      if (exported.has(s) || reported.has(s)) return;
      reported.add(s);
      const decl = s.declarations![0]!;
      missing.push({ type: s.name, declaredIn: relative(ROOT, decl.getSourceFile().fileName), entry, via });
    };

    const walkSignature = (sig: ts.Signature, via: string): void => {
      for (const tp of sig.getTypeParameters() ?? []) {
        const c = tp.getConstraint();
        if (c) walk(c, `${via} <${tp.symbol.name}>`);
      }
      for (const param of sig.getParameters()) walk(checker.getTypeOfSymbol(param), `${via} (${param.name})`);
      walk(checker.getReturnTypeOfSignature(sig), `${via} =>`);
    };

    const walkMembers = (type: ts.Type, via: string): void => {
      for (const prop of checker.getPropertiesOfType(type)) {
        const decl = prop.valueDeclaration ?? prop.declarations?.[0];
        const mods = decl ? ts.getCombinedModifierFlags(decl as ts.Declaration) : 0;
        if (mods & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected) || prop.name.startsWith('#'))
          continue;
        walk(checker.getTypeOfSymbol(prop), `${via}.${prop.name}`);
      }
      for (const kind of [ts.SignatureKind.Call, ts.SignatureKind.Construct]) {
        for (const sig of checker.getSignaturesOfType(type, kind)) walkSignature(sig, via);
      }
      const index = checker.getIndexInfosOfType(type);
      for (const info of index) walk(info.type, `${via}[]`);
    };

    /** Walks a type met in a signature; `body` walks an exported declaration's own structure. */
    function walk(type: ts.Type, via: string, body = false): void {
      if (seen.has(type) && !body) return;
      seen.add(type);
      const alias = type.aliasSymbol;
      if (alias && !body) {
        for (const arg of type.aliasTypeArguments ?? []) walk(arg, via);
        if (ours(alias)) require(alias, via);
        return;
      }
      if (type.isUnionOrIntersection()) {
        for (const t of type.types) walk(t, via);
        return;
      }
      if (type.flags & ts.TypeFlags.Object) {
        const object = type as ts.ObjectType;
        const args =
          object.objectFlags & ts.ObjectFlags.Reference
            ? checker.getTypeArguments(type as ts.TypeReference)
            : [];
        for (const arg of args) walk(arg, via);
        const symbol = type.getSymbol();
        if (symbol && named(symbol) && !body) {
          if (ours(symbol)) require(symbol, via);
          return;
        }
        if (
          symbol &&
          !ours(symbol) &&
          !(symbol.flags & ts.SymbolFlags.TypeLiteral) &&
          !(symbol.flags & ts.SymbolFlags.ObjectLiteral) &&
          !(symbol.flags & (ts.SymbolFlags.Function | ts.SymbolFlags.Method))
        ) {
          return; // a library's type (Promise, Map, undici's Dispatcher): its arguments only
        }
        walkMembers(type, via);
      }
    }

    for (const { name, symbol } of exportsOf(entry)) {
      if (!ours(symbol)) continue;
      const via = `${entry}: ${name}`;
      if (
        symbol.flags &
        (ts.SymbolFlags.Interface | ts.SymbolFlags.Class | ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Enum)
      ) {
        walk(checker.getDeclaredTypeOfSymbol(symbol), via, true);
      }
      if (symbol.flags & (ts.SymbolFlags.Function | ts.SymbolFlags.Variable | ts.SymbolFlags.Class)) {
        walk(checker.getTypeOfSymbol(symbol), via, true);
      }
    }
  }
  return missing;
}

describe('the public types', () => {
  it.skipIf(process.env['QG_SKIP_TYPE_CHECKS'] !== undefined)(
    'every type a public signature names is exported where the function is (or by the root)',
    () => {
      const missing = unexportedTypes();
      expect(missing.map((m) => `${m.type} (${m.declaredIn}), reached from ${m.via}`)).toEqual([]);
    },
    120_000,
  );
});
