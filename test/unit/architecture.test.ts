// The folder rules of docs/architecture.md, checked over the import graph of src/ (test/helpers/import-graph.ts):
// workflows stay deterministic, imports flow one way (no cycles, type-only ones included), the HTTP routes reach
// tables through services, and nothing in src/ leans on bench/ or test/.
import { describe, expect, it } from 'vitest';
import { importCycles, importGraph, importsOf, type ImportEdge } from '../helpers/import-graph.js';

/** Pure modules (no I/O, no clock, no randomness) that workflows may run: the reconciliation rules and verdicts. */
const WORKFLOW_PURE_MODULES = ['src/inbound/verdict.ts', 'src/inbound/state-machine.ts', 'src/inbound/posting-outcome.ts'];
/** Erased at compile time, so a workflow may name their types: activity interfaces, posting kinds. */
const WORKFLOW_TYPE_SOURCES = ['src/activities/', 'src/ledger/postings.ts'];
/** Packages a workflow's modules may load: the workflow SDK, and the failure classes src/shared builds on. */
const WORKFLOW_PACKAGES = ['@temporalio/workflow', '@temporalio/common'];
/** TODO(issue 9): admin routes that still read tables directly; move the queries into src/inbound or src/outbound. */
const API_SCHEMA_EXCEPTIONS = ['src/api/admin/exports.ts', 'src/api/admin/outbound-schemas.ts'];

const edges = importGraph(['src']);
const local = (e: ImportEdge) => e.specifier.startsWith('.');
const under = (path: string, prefixes: string[]) => prefixes.some((p) => path === p || (p.endsWith('/') && path.startsWith(p)));
const show = (e: ImportEdge) => `${e.from} imports ${e.specifier}${e.typeOnly ? ' (type)' : ''}`;

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

  it('a type-only cycle is a cycle', () => {
    const broken = [...edges, ...fake('src/db/client.ts', "import type { SmokeActivities } from '../activities/smoke.js';")];
    expect(importCycles(broken)).toContainEqual(['src/activities/smoke.ts', 'src/db/client.ts']);
  });

  it('an import of bench/ from src/ resolves to bench/', () => {
    const [edge] = fake('src/lib/x.ts', "import { runProviderOutageDrill } from '../../bench/provider-outage-drill.js';");
    expect(edge?.to).toBe('bench/provider-outage-drill.ts');
  });
});
