// P3: the reconciliation backlog gate (src/inbound/backlog-gate.ts) with a fake backlog reader and clock: starts go
// through while the backlog plus the starts made since the figure changed stay under max; a full queue holds them
// until the figure drops; a reader that fails leaves the gate open; max 0 is no gate.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backlogGate } from '../../src/inbound/backlog-gate.js';

const temporal = {} as never; // never called: each test gives its own reader

describe('reconciliation backlog gate (P3)', () => {
  it('lets through exactly max − backlog starts on one figure, and more once the figure drops', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 0, max: 60 }), async (max, backlog) => {
        let figure = backlog;
        let reads = 0;
        const gate = backlogGate({
          temporal,
          taskQueue: 'q',
          max,
          pollMs: 5,
          forgetMs: 60_000,
          readBacklog: async () => (reads++, figure),
        });
        let through = 0;
        const attempts = Array.from({ length: max }, () => gate.acquire().then(() => void through++));
        await new Promise((r) => setTimeout(r, 30));
        expect(through).toBe(Math.max(0, max - backlog));
        figure = 0; // the workers caught up: a new figure, the count since it starts again
        await Promise.all(attempts);
        expect(through).toBe(max);
        expect(reads).toBeGreaterThan(0);
      }),
      { numRuns: 40 },
    );
  });

  it('a figure that stays the same forgets the counted starts after forgetMs (a queue that never backs up)', async () => {
    const gate = backlogGate({ temporal, taskQueue: 'q', max: 3, pollMs: 5, forgetMs: 40, readBacklog: async () => 0 });
    const started = performance.now();
    for (let i = 0; i < 7; i++) await gate.acquire();
    expect(performance.now() - started).toBeGreaterThanOrEqual(40 * 2 - 10); // two forgets for 7 starts at max 3
  });

  it('ready() waits like acquire() without counting a start', async () => {
    let figure = 10;
    const gate = backlogGate({ temporal, taskQueue: 'q', max: 10, pollMs: 5, forgetMs: 60_000, readBacklog: async () => figure });
    let ready = false;
    const waiting = gate.ready().then(() => (ready = true));
    await new Promise((r) => setTimeout(r, 25));
    expect(ready).toBe(false);
    figure = 9;
    await waiting;
    await gate.ready(); // still room for one: ready() did not take it
    await gate.acquire();
    let more = false;
    void gate.acquire().then(() => (more = true));
    await new Promise((r) => setTimeout(r, 25));
    expect(more).toBe(false);
    figure = 0;
  });

  it('a reader that fails leaves the gate open (and it closes again once the figure comes back)', async () => {
    let fail = true;
    const gate = backlogGate({
      temporal,
      taskQueue: 'q',
      max: 2,
      pollMs: 5,
      forgetMs: 60_000,
      readBacklog: async () => {
        if (fail) throw new Error('unimplemented');
        return 100;
      },
    });
    for (let i = 0; i < 10; i++) await gate.acquire();
    fail = false;
    await new Promise((r) => setTimeout(r, 10));
    let through = false;
    void gate.acquire().then(() => (through = true));
    await new Promise((r) => setTimeout(r, 30));
    expect(through).toBe(false);
  });

  it('max 0 is no gate: nothing is read', async () => {
    let reads = 0;
    const gate = backlogGate({ temporal, taskQueue: 'q', max: 0, readBacklog: async () => (reads++, 1_000_000) });
    for (let i = 0; i < 100; i++) await gate.acquire();
    expect(reads).toBe(0);
  });
});
