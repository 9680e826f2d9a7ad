// The import graph of the TypeScript sources, built with the compiler's parser (no type-checking, so it is fast):
// each file's imports and re-exports with the file they resolve to and whether they are erased at compile time
// (`import type`, or every named binding `type`). test/unit/architecture.test.ts states the rules over it.
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

export interface ImportEdge {
  /** Importing file, relative to the root (`src/workflows/delivery.ts`). */
  from: string;
  /** The specifier as written (`../shared/failures.js`, `@temporalio/workflow`). */
  specifier: string;
  /** The resolved file relative to the root for a relative import, else the package name. */
  to: string;
  /** True when the import is erased (`import type`, `export type`, or only `type` bindings). */
  typeOnly: boolean;
}

export const ROOT = resolve(import.meta.dirname, '../..');

export function sourceFiles(folder: string, root = ROOT): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts')) out.push(relative(root, path));
    }
  };
  walk(join(root, folder));
  return out.sort();
}

function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** `./x.js` → `x.ts` the way NodeNext resolution finds TypeScript sources (`.js` written, `.ts` on disk). */
function resolveRelative(from: string, specifier: string, root: string): string {
  const base = resolve(root, dirname(from), specifier);
  const candidates = [base.replace(/\.js$/, '.ts'), base.replace(/\.mjs$/, '.mts'), base, `${base}.ts`, join(base, 'index.ts')];
  const found = candidates.find((c) => existsSync(c) && statSync(c).isFile());
  return relative(root, found ?? base);
}

function isTypeOnly(node: ts.ImportDeclaration | ts.ExportDeclaration): boolean {
  if (ts.isExportDeclaration(node)) {
    if (node.isTypeOnly) return true;
    const clause = node.exportClause;
    return !!clause && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly);
  }
  const clause = node.importClause;
  if (!clause) return false; // a side-effect import runs the module
  if (clause.isTypeOnly) return true;
  if (clause.name) return false;
  const bindings = clause.namedBindings;
  return (
    !!bindings && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly)
  );
}

export function importsOf(file: string, root = ROOT, text = readFileSync(join(root, file), 'utf8')): ImportEdge[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, false, ts.ScriptKind.TS);
  const edges: ImportEdge[] = [];
  const add = (specifier: string, typeOnly: boolean) => {
    const to = specifier.startsWith('.') ? resolveRelative(file, specifier, root) : packageName(specifier);
    edges.push({ from: file, specifier, to, typeOnly });
  };
  const visit = (node: ts.Node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      add(node.moduleSpecifier.text, isTypeOnly(node));
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteral(arg)) add(arg.text, false); // import('…')
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node.argument.literal.text, true); // type X = import('…').Y
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return edges;
}

export function importGraph(folders: string[], root = ROOT): ImportEdge[] {
  return folders.flatMap((folder) => sourceFiles(folder, root)).flatMap((file) => importsOf(file, root));
}

/** Strongly connected components with more than one file (or a file importing itself): the import cycles. */
export function importCycles(edges: ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges)
    if (e.to.startsWith('src/') || e.to.startsWith('test/') || e.to.startsWith('bench/')) {
      next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
    }
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const strongConnect = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        strongConnect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (next.get(v) ?? []).includes(v)) cycles.push(component.sort());
    }
  };
  for (const v of next.keys()) if (!index.has(v)) strongConnect(v);
  return cycles;
}
