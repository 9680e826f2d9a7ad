// docs/architecture.md held against the code (issue 31): every arrow of the dependency diagram is an import that
// exists, every room of the folder order is drawn, and the prose's workflow allow-list and schema exceptions are the
// ones test/unit/architecture.test.ts enforces. A page that drifts from the imports fails here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  API_SCHEMA_EXCEPTIONS,
  blockAfter,
  diagramArrows,
  diagramRooms,
  WORKFLOW_PURE_MODULES,
} from '../helpers/architecture-doc.js';
import { importGraph, ROOT } from '../helpers/import-graph.js';

const DOC = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
const DIAGRAM = blockAfter(DOC, '## Which way the code depends');
const edges = importGraph(['src']);
const roomOf = (path: string) => /^src\/([^/]+)\//.exec(path)?.[1] ?? null;
const rooms = [...new Set(edges.flatMap((e) => [roomOf(e.from), roomOf(e.to)]))].filter((r) => r !== null);
const joins = (from: string, to: string, typeOnly: boolean) =>
  edges.some((e) => roomOf(e.from) === from && roomOf(e.to) === to && (!typeOnly || e.typeOnly));

describe('docs/architecture.md matches the import graph', () => {
  it('reads the diagram (it has arrows)', () => {
    expect(diagramArrows(DIAGRAM).length).toBeGreaterThanOrEqual(2);
  });

  it('every arrow of the diagram is an import between those rooms (a (types) arrow a type-only one)', () => {
    const missing = diagramArrows(DIAGRAM).filter((a) => !joins(a.from, a.to, a.typeOnly));
    expect(missing).toEqual([]);
  });

  it('the diagram draws every room of src/', () => {
    expect(rooms.filter((r) => !diagramRooms(DIAGRAM).includes(r)).sort()).toEqual([]);
  });

  it('the prose names each pure module workflows may load, and only the schema exceptions that still exist', () => {
    const prose = DOC.slice(DOC.indexOf('## Which way the code depends'), DOC.indexOf('## Who guarantees what'));
    for (const file of WORKFLOW_PURE_MODULES) expect(prose).toContain(`\`${file}\``);
    for (const file of API_SCHEMA_EXCEPTIONS) {
      expect(prose).toContain(`\`${file}\``);
      expect(edges.some((e) => e.from === file && e.to.startsWith('src/db/schema'))).toBe(true); // not stale
    }
    expect(prose).not.toContain('src/api/admin/exports.ts');
  });
});

describe('the diagram reader', () => {
  it('reads chains, (types) arrows and rooms; text outside the block is not read', () => {
    const block = blockAfter(
      'x src/a ─▶ src/z\n## H\n```\n src/a ─▶ src/b ─▶ src/c\n src/d ─(types)─▶ src/e ▸ src/f\n```',
      '## H',
    );
    expect(diagramArrows(block)).toEqual([
      { from: 'a', to: 'b', typeOnly: false },
      { from: 'b', to: 'c', typeOnly: false },
      { from: 'd', to: 'e', typeOnly: true },
    ]);
    expect(diagramRooms(block)).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
  });
});
