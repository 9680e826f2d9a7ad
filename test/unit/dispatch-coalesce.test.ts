// P9: concurrent partition batches of one turn are handled in one call (src/dispatcher/coalesce.ts): every batch
// resolves only after a call that held all its messages succeeded, never before; a joint failure is retried batch by
// batch, so a batch fails only when it fails alone; no call holds more than maxMessages unless one batch alone does.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { coalesceBatches } from '../../src/dispatcher/coalesce.js';
import type { MessageBatch } from '../../src/kafka/types.js';

const batchOf = (partition: number, count: number): MessageBatch => ({
  topic: 't',
  partition,
  lag: 0,
  messages: Array.from({ length: count }, (_, i) => ({
    topic: 't',
    partition,
    offset: String(i),
    key: null,
    value: Buffer.from(`${partition}:${i}`),
    timestamp: '0',
    headers: {},
  })),
});

describe('dispatcher batch coalescing (P9)', () => {
  it('batches of the same turn go to one call; each resolves after it', async () => {
    const calls: number[][] = [];
    const handle = coalesceBatches(
      async (batches) => {
        calls.push(batches.map((b) => b.partition));
      },
      { maxMessages: 100 },
    );
    await Promise.all([0, 1, 2, 3].map((p) => handle(batchOf(p, 2))));
    expect(calls).toEqual([[0, 1, 2, 3]]);
    await handle(batchOf(5, 1)); // a later turn: a call of its own
    expect(calls).toEqual([[0, 1, 2, 3], [5]]);
  });

  it('property: resolved only after a successful call held all its messages; failed only when it failed alone; calls stay under the bound', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ count: fc.integer({ min: 1, max: 30 }), bad: fc.boolean(), turn: fc.integer({ min: 0, max: 2 }) }), {
          minLength: 1,
          maxLength: 12,
        }),
        fc.integer({ min: 1, max: 40 }),
        async (specs, maxMessages) => {
          const succeeded = new Set<number>(); // partitions handled by a call that succeeded
          const violations: string[] = [];
          const handle = coalesceBatches(
            async (batches) => {
              const total = batches.reduce((n, b) => n + b.messages.length, 0);
              if (batches.length > 1 && total > maxMessages) violations.push(`a call of ${total} > ${maxMessages}`);
              await new Promise((r) => setImmediate(r));
              if (batches.some((b) => specs[b.partition]!.bad)) throw new Error('refused');
              for (const b of batches) succeeded.add(b.partition);
            },
            { maxMessages },
          );
          const outcomes: Promise<'ok' | 'failed'>[] = [];
          for (const turn of [0, 1, 2]) {
            specs.forEach((s, p) => {
              if (s.turn === turn)
                outcomes[p] = handle(batchOf(p, s.count)).then(
                  () => (succeeded.has(p) ? 'ok' : ('resolved early' as never)),
                  () => 'failed',
                );
            });
            await new Promise((r) => setImmediate(r));
          }
          const results = await Promise.all(outcomes);
          expect(violations).toEqual([]);
          expect(results).toEqual(specs.map((s) => (s.bad ? 'failed' : 'ok')));
        },
      ),
      { numRuns: 200 },
    );
  });
});
