// The ESLint override for src/workflows/** (eslint.config.js, issue 31): a value import of the database client or a
// Node built-in in a workflow file is an error in the editor, while type imports of activity interfaces and the
// workflow SDK pass. The graph-wide rule is test/unit/architecture.test.ts; this proves the early warning fires.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/import-graph.js';

const lint = async (text: string) => {
  const [result] = await new ESLint({ cwd: ROOT }).lintText(text, { filePath: `${ROOT}/src/workflows/probe.ts` });
  return (result?.messages ?? []).filter((m) => m.ruleId === '@typescript-eslint/no-restricted-imports').map((m) => m.line);
};

describe('ESLint: workflows import only deterministic modules', () => {
  it('flags node:crypto and the database client, passes the SDK, src/shared, pure rules and type imports', async () => {
    const lines = await lint(
      [
        "import { randomUUID } from 'node:crypto';",
        "import { createDatabase } from '../db/client.js';",
        "import { proxyActivities } from '@temporalio/workflow';",
        "import { SA } from '../shared/search-attributes.js';",
        "import { verdictFor } from '../inbound/verdict.js';",
        "import type { DeliveryActivities } from '../activities/delivery.js';",
        "import { createDeliveryActivities } from '../activities/delivery.js';",
        'export const used = [randomUUID, createDatabase, proxyActivities, SA, verdictFor, createDeliveryActivities];',
        'export type T = DeliveryActivities;',
      ].join('\n'),
    );
    expect(lines).toEqual([1, 2, 7]);
  }, 30_000);
});
