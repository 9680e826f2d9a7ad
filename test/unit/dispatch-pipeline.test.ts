// P2/P9: the batched first attempts behind the committed offsets (src/dispatcher/pipeline.ts): never more than
// `depth` deliveries in hand (a batch larger than the depth alone), a submit waits until its share fits, at most
// `maxSends` sends at once with what was submitted meanwhile merged into the next send, every item sent exactly once,
// a failed send is logged and frees its share, drain() waits for everything in hand.
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createPipeline } from '../../src/dispatcher/pipeline.js';
import { createLogger } from '../../src/lib/logger.js';

const silent = createLogger('t', 'info', new Writable({ write: (_c, _e, done) => done() }));
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('dispatcher pipeline (P2, P9)', () => {
  it('holds at most depth deliveries in hand and maxSends sends at once, sends every item once, and drains', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.record({ count: fc.integer({ min: 1, max: 60 }), fails: fc.boolean(), order: fc.nat() }), {
          minLength: 1,
          maxLength: 25,
        }),
        async (depth, maxSends, batches) => {
          type Item = { batch: number; fails: boolean; order: number };
          const open: { order: number; finish: () => void }[] = [];
          const sent = new Map<number, number>(); // batch → items sent
          const violations: string[] = [];
          let sending = 0;
          const pipeline = createPipeline<Item>({
            depth,
            maxSends,
            logger: silent,
            send: async (items) => {
              sending += 1;
              if (sending > maxSends) violations.push(`${sending} sends > ${maxSends}`);
              const of = new Set(items.map((i) => i.batch));
              for (const b of of)
                if (batches[b]!.count > depth && of.size > 1)
                  violations.push(`a batch of ${batches[b]!.count} sent beside others`);
              for (const i of items) sent.set(i.batch, (sent.get(i.batch) ?? 0) + 1);
              await new Promise<void>((resolve) => open.push({ order: items[0]!.order, finish: resolve }));
              sending -= 1;
              if (items.some((i) => i.fails)) throw new Error('database down');
            },
          });
          let through = 0;
          const submitted = batches.map((b, batch) =>
            pipeline
              .submit(Array.from({ length: b.count }, () => ({ batch, fails: b.fails, order: b.order })))
              .then(() => void through++),
          );
          // Settle the sends one at a time, in an arbitrary order, until every submit got through.
          while (through < batches.length || open.length > 0) {
            await tick();
            expect(pipeline.inHand).toBeLessThanOrEqual(Math.max(depth, ...batches.map((b) => Math.min(b.count, depth))));
            if (open.length === 0) continue;
            open.sort((a, b) => (a.order % 7) - (b.order % 7));
            open.shift()!.finish();
            await tick();
          }
          await Promise.all(submitted);
          await pipeline.drain();
          expect(violations).toEqual([]);
          expect(batches.map((b, i) => sent.get(i) ?? 0)).toEqual(batches.map((b) => b.count));
          expect(pipeline.inHand).toBe(0);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a submit that does not fit waits until earlier work settles, and drain() waits for the work in hand', async () => {
    let release!: () => void;
    const pipeline = createPipeline<number>({
      depth: 10,
      maxSends: 4,
      logger: silent,
      send: (items) => (items.length === 8 ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve()),
    });
    await pipeline.submit([1, 2, 3, 4, 5, 6, 7, 8]);
    let second = false;
    const waiting = pipeline.submit([1, 2, 3, 4, 5]).then(() => (second = true));
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

  it('what is submitted while maxSends sends run goes out merged in one send when a send finishes', async () => {
    const sends: number[][] = [];
    const releases: (() => void)[] = [];
    const pipeline = createPipeline<number>({
      depth: 100,
      maxSends: 2,
      logger: silent,
      send: (items) => {
        sends.push(items);
        return new Promise<void>((resolve) => releases.push(resolve));
      },
    });
    await pipeline.submit([1]);
    await pipeline.submit([2]);
    await pipeline.submit([3]);
    await pipeline.submit([4, 5]);
    await tick();
    expect(sends).toEqual([[1], [2]]);
    expect(pipeline.inHand).toBe(5);
    releases.shift()!();
    await tick();
    await tick();
    expect(sends).toEqual([[1], [2], [3, 4, 5]]);
    for (const release of releases) release();
    releases.length = 0;
    await tick();
    releases.forEach((r) => r());
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
    let fail = true;
    const pipeline = createPipeline<number>({
      depth: 4,
      maxSends: 4,
      logger,
      send: async () => {
        if (fail)
          throw Object.assign(new Error('insert into delivery_attempts values ($1) secret=whsec_x'), { name: 'DatabaseError' });
      },
    });
    await pipeline.submit([1, 2, 3, 4]);
    await pipeline.drain();
    expect(pipeline.inHand).toBe(0);
    expect(lines.join('')).toContain('the hand-off sweep takes them over');
    expect(lines.join('')).not.toContain('whsec_x');
    fail = false;
    await pipeline.submit([1, 2, 3, 4]); // the share was given back: no wait
    await pipeline.drain();
  });
});
