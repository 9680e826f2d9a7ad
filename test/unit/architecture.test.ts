// The folder rules of docs/architecture.md, checked over the import graph of src/ (test/helpers/import-graph.ts):
// imports only go down the folder order written in docs/architecture.md (type-only ones included), workflows stay
// deterministic, no cycles, the HTTP routes reach tables through services, and nothing in src/ leans on bench/ or
// test/.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { API_SCHEMA_EXCEPTIONS, WORKFLOW_PURE_MODULES } from '../helpers/architecture-doc.js';
import { importCycles, importGraph, importsOf, ROOT, sourceFiles, type ImportEdge } from '../helpers/import-graph.js';

/** Erased at compile time, so a workflow may name their types: activity interfaces, posting kinds. */
const WORKFLOW_TYPE_SOURCES = ['src/activities/', 'src/ledger/postings.ts'];
/** Packages a workflow's modules may load: the workflow SDK, and the failure classes src/shared builds on. */
const WORKFLOW_PACKAGES = ['@temporalio/workflow', '@temporalio/common'];

const edges = importGraph(['src']);
const local = (e: ImportEdge) => e.specifier.startsWith('.');
const under = (path: string, prefixes: string[]) => prefixes.some((p) => path === p || (p.endsWith('/') && path.startsWith(p)));
const show = (e: ImportEdge) => `${e.from} imports ${e.specifier}${e.typeOnly ? ' (type)' : ''}`;

/** The numbered list under "The folder order" in docs/architecture.md: the rooms of src/, top to bottom. */
export function folderOrder(markdown: string): string[] {
  const start = markdown.indexOf('**The folder order**');
  if (start < 0) return [];
  // The list is the first run of numbered lines after the heading; the text after it is not read.
  const lines = markdown.slice(start).split('\n').slice(1);
  const first = lines.findIndex((l) => /^\d+\. /.test(l));
  const list = first < 0 ? [] : lines.slice(first);
  const end = list.findIndex((l) => !/^\d+\. /.test(l));
  return (end < 0 ? list : list.slice(0, end)).map((l) => /^\d+\. `src\/([a-z0-9-]+)`/.exec(l)?.[1] ?? `unreadable: ${l}`);
}

/** The room (first folder under src/) of a file, or null for a package or a file outside src/. */
const roomOf = (path: string) => /^src\/([^/]+)\//.exec(path)?.[1] ?? null;

/** Every import from one room to another that does not go down `order` (or touches a room the order omits). */
export function climbingImports(graph: ImportEdge[], order: string[]): string[] {
  const rank = new Map(order.map((room, i) => [room, i]));
  const out: string[] = [];
  for (const e of graph) {
    if (!local(e)) continue;
    const from = roomOf(e.from);
    const to = roomOf(e.to);
    if (to === null && e.to.startsWith('src/')) out.push(`${show(e)}: a file directly under src/ is in no room`);
    if (from === null || to === null || from === to) continue;
    const a = rank.get(from);
    const b = rank.get(to);
    if (a === undefined || b === undefined) out.push(`${show(e)}: src/${a === undefined ? from : to} is not in the folder order`);
    else if (b < a) out.push(`${show(e)}: src/${to} is above src/${from}`);
  }
  return out;
}

const ORDER = folderOrder(readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8'));

/** The edges that break the workflow rules, from `roots` through every module they load at run time. */
export function workflowViolations(graph: ImportEdge[], roots: string[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const visit = (file: string, direct: boolean) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const e of graph.filter((g) => g.from === file)) {
      if (e.typeOnly) {
        if (local(e) && !under(e.to, ['src/shared/', 'src/workflows/', ...WORKFLOW_PURE_MODULES, ...WORKFLOW_TYPE_SOURCES]))
          out.push(show(e));
        continue;
      }
      const allowed = local(e)
        ? under(e.to, ['src/shared/', 'src/workflows/', ...WORKFLOW_PURE_MODULES])
        : direct
          ? e.to === '@temporalio/workflow'
          : WORKFLOW_PACKAGES.includes(e.to);
      if (!allowed) out.push(show(e));
      else if (local(e)) visit(e.to, e.to.startsWith('src/workflows/'));
    }
  };
  roots.forEach((r) => visit(r, true));
  return out;
}

describe('architecture: import rules over src/', () => {
  it('sees the imports (the graph is not empty and resolves relative paths to files)', () => {
    expect(edges.length).toBeGreaterThan(200);
    expect(edges).toContainEqual(
      expect.objectContaining({ from: 'src/workflows/delivery.ts', to: 'src/shared/failures.ts', typeOnly: false }),
    );
  });

  it('workflows load only @temporalio/workflow, src/shared and the allow-listed pure modules (types from activities)', () => {
    const roots = [...new Set(edges.map((e) => e.from).filter((f) => f.startsWith('src/workflows/')))];
    expect(workflowViolations(edges, roots)).toEqual([]);
  });

  it('docs/architecture.md orders every room of src/, each once', () => {
    const rooms = [...new Set(sourceFiles('src').map(roomOf))].filter((r) => r !== null);
    expect(ORDER.length).toBeGreaterThan(15);
    expect(new Set(ORDER).size).toBe(ORDER.length);
    expect([...ORDER].sort()).toEqual(rooms.sort());
    expect(sourceFiles('src').filter((f) => roomOf(f) === null)).toEqual([]); // no file outside a room
    expect(ORDER[0]).toBe('workers');
    expect(ORDER.at(-1)).toBe('shared');
  });

  it('every import between rooms goes down the folder order (type-only ones included)', () => {
    expect(climbingImports(edges, ORDER)).toEqual([]);
  });

  it('has no import cycles, type-only ones included', () => {
    expect(importCycles(edges)).toEqual([]);
  });

  it('API routes never import the database schema (they go through services)', () => {
    const bad = edges.filter(
      (e) => e.from.startsWith('src/api/') && e.to.startsWith('src/db/schema') && !API_SCHEMA_EXCEPTIONS.includes(e.from),
    );
    expect(bad.map(show)).toEqual([]);
  });

  it('src/ never imports bench/ or test/', () => {
    const bad = edges.filter((e) => /^(bench|test)\//.test(e.to));
    expect(bad.map(show)).toEqual([]);
  });
});

describe('architecture: the checks fail on a broken import', () => {
  const fake = (file: string, text: string) => importsOf(file, undefined, text);

  it('a workflow importing the database client, or a value from activities, is reported', () => {
    const broken = [
      ...edges.filter((e) => e.from !== 'src/workflows/delivery.ts'),
      ...fake(
        'src/workflows/delivery.ts',
        "import { createDb } from '../db/client.js';\nimport { createDeliveryActivities } from '../activities/delivery.js';",
      ),
    ];
    expect(workflowViolations(broken, ['src/workflows/delivery.ts'])).toEqual([
      'src/workflows/delivery.ts imports ../db/client.js',
      'src/workflows/delivery.ts imports ../activities/delivery.js',
    ]);
  });

  it('a pure module that starts doing I/O is reported through the workflow that loads it', () => {
    const broken = [...edges, ...fake('src/inbound/verdict.ts', "import { sql } from 'drizzle-orm';")];
    expect(workflowViolations(broken, ['src/workflows/reconciliation/index.ts'])).toContain(
      'src/inbound/verdict.ts imports drizzle-orm',
    );
  });

  it('an import that climbs the folder order is reported, a type-only one too', () => {
    const broken = [
      ...edges,
      ...fake('src/db/schema/inbound.ts', "import type { ItemMatch } from '../../inbound/verdict.js';"),
      ...fake('src/lib/x.ts', "import { createDeliveryActivities } from '../activities/delivery.js';"),
    ];
    expect(climbingImports(broken, ORDER)).toEqual([
      'src/db/schema/inbound.ts imports ../../inbound/verdict.js (type): src/inbound is above src/db',
      'src/lib/x.ts imports ../activities/delivery.js: src/activities is above src/lib',
    ]);
  });

  it('an import into a room the folder order does not name is reported', () => {
    const broken = [...edges, ...fake('src/api/x.ts', "import { thing } from '../newroom/thing.js';")];
    expect(climbingImports(broken, ORDER)).toEqual([
      'src/api/x.ts imports ../newroom/thing.js: src/newroom is not in the folder order',
    ]);
  });

  it('reads the folder order from the numbered list only', () => {
    const doc =
      'intro `src/api`\n\n**The folder order**, top to bottom:\n\n1. `src/workers` — x\n2. `src/shared`\n\nLater `src/db`.';
    expect(folderOrder(doc)).toEqual(['workers', 'shared']);
  });

  it('a type-only cycle is a cycle', () => {
    const broken = [...edges, ...fake('src/db/client.ts', "import type { SmokeActivities } from '../activities/smoke.js';")];
    expect(importCycles(broken)).toContainEqual(['src/activities/smoke.ts', 'src/db/client.ts']);
  });

  it('an import of bench/ from src/ resolves to bench/', () => {
    const [edge] = fake('src/lib/x.ts', "import { runProviderOutageDrill } from '../../bench/provider-outage-drill.js';");
    expect(edge?.to).toBe('bench/provider-outage-drill.ts');
  });
});
