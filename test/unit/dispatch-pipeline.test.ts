// P2: the batched first attempts behind the committed offsets (src/dispatcher/pipeline.ts): never more than `depth`
// deliveries in hand (a batch larger than the depth alone), a submit waits until its share fits, a failed piece of
// work is logged and frees its share, drain() waits for everything in hand.
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createPipeline } from '../../src/dispatcher/pipeline.js';
import { createLogger } from '../../src/lib/logger.js';

const silent = createLogger('t', 'info', new Writable({ write: (_c, _e, done) => done() }));
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('dispatcher pipeline (P2)', () => {
  it('holds at most depth deliveries in hand, lets each submit through once its share fits, and drains', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 40 }),
        fc.array(fc.record({ count: fc.integer({ min: 1, max: 60 }), fails: fc.boolean(), order: fc.nat() }), {
          minLength: 1,
          maxLength: 25,
        }),
        async (depth, batches) => {
          const pipeline = createPipeline(depth, silent);
          const open: { order: number; finish: () => void }[] = [];
          let working = 0; // the shares of the work that started and has not settled
          const violations: string[] = [];
          let through = 0;
          const submitted = batches.map((b) =>
            pipeline
              .submit(b.count, async () => {
                const share = Math.min(b.count, depth);
                working += share;
                if (working > depth) violations.push(`${working} in hand > depth ${depth}`);
                if (b.count > depth && working !== share) violations.push(`a batch of ${b.count} ran beside others`);
                await new Promise<void>((resolve) => open.push({ order: b.order, finish: resolve }));
                working -= share;
                if (b.fails) throw new Error('database down');
              })
              .then(() => void through++),
          );
          // Settle the work in hand one piece at a time, in an arbitrary order, until every submit got through.
          while (through < batches.length || open.length > 0) {
            await tick();
            if (open.length === 0) continue;
            open.sort((a, b) => (a.order % 7) - (b.order % 7));
            open.shift()!.finish();
            await tick();
            expect(pipeline.inHand).toBeLessThanOrEqual(depth);
          }
          await Promise.all(submitted);
          await pipeline.drain();
          expect(violations).toEqual([]);
          expect(pipeline.inHand).toBe(0);
          expect(working).toBe(0);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a submit that does not fit waits until earlier work settles, and drain() waits for the work in hand', async () => {
    const pipeline = createPipeline(10, silent);
    let release!: () => void;
    await pipeline.submit(8, () => new Promise<void>((resolve) => (release = resolve)));
    let second = false;
    const waiting = pipeline.submit(5, async () => {}).then(() => (second = true));
    await tick();
    expect(second).toBe(false);
    expect(pipeline.inHand).toBe(8);
    let drained = false;
    const draining = pipeline.drain().then(() => (drained = true));
    await tick();
    expect(drained).toBe(false);
    release();
    await waiting;
    await draining;
    expect(second).toBe(true);
    await pipeline.drain();
    expect(pipeline.inHand).toBe(0);
  });

  it('a failure is logged without its details and frees its share', async () => {
    const lines: string[] = [];
    const logger = createLogger(
      't',
      'info',
      new Writable({ write: (chunk, _e, done) => (lines.push(chunk.toString()), done()) }),
    );
    const pipeline = createPipeline(4, logger);
    await pipeline.submit(4, async () => {
      throw Object.assign(new Error('insert into delivery_attempts values ($1) secret=whsec_x'), { name: 'DatabaseError' });
    });
    await pipeline.drain();
    expect(pipeline.inHand).toBe(0);
    expect(lines.join('')).toContain('the hand-off sweep takes them over');
    expect(lines.join('')).not.toContain('whsec_x');
    await pipeline.submit(4, async () => {}); // the share was given back: no wait
    await pipeline.drain();
  });
});
