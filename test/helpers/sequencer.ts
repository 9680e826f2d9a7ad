// P11: the order files start in. Integration files run several at a time, so a run lasts at least as long as its
// longest file plus whatever started before it: the long ones (measured, docs/testing.md) start first, the soak
// before all, and the rest follow vitest's own order (failed first, then slowest first from its cache, else largest).
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Slowest first, from the per-file durations of a full run on the 2-core machine. */
export const LONG_FILES = [
  'test/integration/soak.test.ts',
  'test/integration/outbound-ordering.test.ts',
  'test/integration/outbound-dispatcher.test.ts',
  'test/browser/console.test.ts',
  'test/integration/reconciliation.test.ts',
  'test/integration/trace.test.ts',
  'test/integration/image-tree.test.ts',
  'test/integration/step-faults.test.ts',
  'test/integration/resolution-truth.test.ts',
  'test/fuzz/merchant-responses.test.ts',
  'test/integration/drill.test.ts',
  'test/integration/startup-failures.test.ts',
  'test/integration/workflows-reconciliation.test.ts',
];

const rank = (spec: TestSpecification) => {
  const index = LONG_FILES.findIndex((file) => spec.moduleId.endsWith(`/${file}`));
  return index === -1 ? LONG_FILES.length : index;
};

export default class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    return sorted
      .map((spec, position) => ({ spec, position }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.position - b.position)
      .map(({ spec }) => spec);
  }
}
