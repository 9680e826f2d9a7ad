// What docs/architecture.md says about the import graph, read back so test/unit/architecture-docs.test.ts can hold
// the page against the code (issue 31): the arrows of the "Which way the code depends" diagram, the rooms it names,
// and the allow-lists the prose and test/unit/architecture.test.ts share.

/** Pure modules (no I/O, no clock, no randomness) that workflows may run: the reconciliation rules and verdicts. */
export const WORKFLOW_PURE_MODULES = [
  'src/inbound/verdict.ts',
  'src/inbound/state-machine.ts',
  'src/inbound/posting-outcome.ts',
  'src/outbound/retry-policy.ts',
];
/** TODO(issue 9): admin modules that still name tables directly; move them behind src/inbound or src/outbound. */
export const API_SCHEMA_EXCEPTIONS = ['src/api/admin/outbound-schemas.ts'];

export interface DiagramArrow {
  from: string;
  to: string;
  /** Drawn `─(types)─▶`: the rooms are joined by type-only imports. */
  typeOnly: boolean;
}

/** The fenced block that follows `heading` (the first ``` after it), or '' when there is none. */
export function blockAfter(markdown: string, heading: string): string {
  const start = markdown.indexOf(heading);
  if (start < 0) return '';
  const open = markdown.indexOf('```', start);
  const close = open < 0 ? -1 : markdown.indexOf('```', open + 3);
  return close < 0 ? '' : markdown.slice(open + 3, close);
}

const ARROW = /src\/([a-z0-9-]+)\s*─(\(types\))?─?▶\s*src\/([a-z0-9-]+)/g;

/** Every `src/a ─▶ src/b` (or `─(types)─▶`) drawn on one line of the diagram. Chains give one arrow per link. */
export function diagramArrows(block: string): DiagramArrow[] {
  const out: DiagramArrow[] = [];
  for (const line of block.split('\n')) {
    let at = 0;
    for (;;) {
      ARROW.lastIndex = at;
      const m = ARROW.exec(line);
      if (!m) break;
      out.push({ from: m[1]!, to: m[3]!, typeOnly: Boolean(m[2]) });
      at = m.index + m[0].length - m[3]!.length - 'src/'.length; // the target starts the next link of a chain
    }
  }
  return out;
}

/** The rooms the diagram names, each once. */
export const diagramRooms = (block: string) => [...new Set([...block.matchAll(/src\/([a-z0-9-]+)/g)].map((m) => m[1]!))];
