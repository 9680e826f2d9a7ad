// I7, R15: a reconciliation's transition rows, read in order, must be a path of config/reconciliation-states.yaml.
// Random walks of the machine are accepted; any one mutation of a walk is rejected; the two sequences a lost
// workflow task left in the soak (issue 24) are rejected with the reason a reader would give.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadReconciliationRules } from '../../src/inbound/load-rules.js';
import { actorKind, checkTransitionPaths, type TransitionPathRow } from '../../src/inbound/transition-paths.js';
import { RECONCILIATION_STATES } from '../../src/inbound/state-machine.js';

const rules = loadReconciliationRules();
const actorOf = (by: 'system' | 'operator', name: string) => (by === 'system' ? 'system' : `operator:${name}`);
const problems = (rows: TransitionPathRow[]) => checkTransitionPaths(rules, rows).map((v) => `${v.index}:${v.problem}`);

/** A walk of the machine from the initial state: at each step one listed transition (choice % options). */
const validPath = fc
  .record({ choices: fc.array(fc.nat(), { maxLength: 8 }), operator: fc.constantFrom('alice', 'bob@example.com') })
  .map(({ choices, operator }) => {
    const rows: TransitionPathRow[] = [];
    let state = rules.initial;
    for (const choice of choices) {
      const options = rules.transitions.filter((t) => t.from === state);
      if (options.length === 0) break;
      const t = options[choice % options.length]!;
      rows.push({ from: t.from, to: t.to, actor: actorOf(t.by, operator) });
      state = t.to;
    }
    return rows;
  });

type Mutation = (rows: TransitionPathRow[], i: number, pick: number) => TransitionPathRow[];
const other = (s: string, pick: number, not: (c: string) => boolean) => {
  const choices = RECONCILIATION_STATES.filter((c) => c !== s && not(c));
  return choices[pick % choices.length]!;
};
const listedFor = (from: string, to: string, actor: string) =>
  rules.transitions.some((t) => t.from === from && t.to === to && t.by === actorKind(actor));
const MUTATIONS: Record<string, Mutation> = {
  'another from': (rows, i, pick) => rows.map((r, j) => (j === i ? { ...r, from: other(r.from, pick, () => true) } : r)),
  // a `to` the machine does not list from this state for this actor (so it cannot be another valid last step)
  'an unlisted to': (rows, i, pick) =>
    rows.map((r, j) => (j === i ? { ...r, to: other(r.to, pick, (c) => !listedFor(r.from, c, r.actor)) } : r)),
  'the other actor': (rows, i) =>
    rows.map((r, j) => (j === i ? { ...r, actor: r.actor === 'system' ? 'operator:mallory' : 'system' } : r)),
  'an unknown actor': (rows, i) => rows.map((r, j) => (j === i ? { ...r, actor: 'worker-7' } : r)),
  'a row dropped (not the last)': (rows, i) => rows.filter((_, j) => j !== Math.min(i, rows.length - 2)),
  'a row repeated': (rows, i) => [...rows.slice(0, i + 1), rows[i]!, ...rows.slice(i + 1)],
  'two rows swapped': (rows, i) => {
    const k = Math.min(i, rows.length - 2);
    const out = [...rows];
    [out[k], out[k + 1]] = [out[k + 1]!, out[k]!];
    return out;
  },
  'a row after the end': (rows) => [...rows, { from: rows.at(-1)!.to, to: 'applied', actor: 'operator:late' }],
};
const needsTwo = new Set(['a row dropped (not the last)', 'two rows swapped']);

describe('R15 transition paths (I7)', () => {
  it('the machine file lists no transition for both actors (so flipping the actor is always a violation)', () => {
    const keys = rules.transitions.map((t) => `${t.from}>${t.to}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('accepts every walk of the machine, ended or not, with system or any operator:<name> actor', () => {
    fc.assert(
      fc.property(validPath, (rows) => {
        expect(problems(rows)).toEqual([]);
      }),
    );
  });

  it('accepts no rows at all (a reconciliation still in received)', () => {
    expect(problems([])).toEqual([]);
  });

  it('rejects any single mutation of a walk', () => {
    const mutated = validPath
      .filter((rows) => rows.length > 0)
      .chain((rows) =>
        fc.record({
          rows: fc.constant(rows),
          name: fc.constantFrom(...Object.keys(MUTATIONS)),
          i: fc.nat({ max: rows.length - 1 }),
          pick: fc.nat(),
        }),
      )
      .filter(({ rows, name }) => !needsTwo.has(name) || rows.length >= 2)
      // appending after the end is a violation only when the walk ended in a terminal state, else it may be a step
      .filter(({ rows, name }) => name !== 'a row after the end' || (rules.terminal as string[]).includes(rows.at(-1)!.to));
    fc.assert(
      fc.property(mutated, ({ rows, name, i, pick }) => {
        const bad = MUTATIONS[name]!(rows, i, pick);
        expect(checkTransitionPaths(rules, bad).length, `${name} at ${i}: ${JSON.stringify(bad)}`).toBeGreaterThan(0);
      }),
    );
  });

  it('rejects a first row that does not leave the initial state', () => {
    expect(problems([{ from: 'reconciling', to: 'applied', actor: 'system' }])).toEqual(['0:broken_chain']);
  });

  // issue 24, seed 8326839 (evt_soak_8326839_1113, _1168): the lost task's manual_review row, then the retry's applied
  it('rejects manual_review followed by the system leaving reconciling (a lost workflow task, then its retry)', () => {
    const rows = [
      { from: 'received', to: 'reconciling', actor: 'system' },
      { from: 'reconciling', to: 'manual_review', actor: 'system' },
      { from: 'reconciling', to: 'applied', actor: 'system' },
    ];
    const violations = checkTransitionPaths(rules, rows);
    expect(violations.map((v) => `${v.index}:${v.problem}`)).toEqual(['2:broken_chain']);
    expect(violations[0]!.message).toContain('leaves reconciling, but the reconciliation was in manual_review');
  });

  // the same window the other way round (seed 777123): the lost attempt applied, the retry timed out to review
  it('rejects anything after a terminal state: applied, then manual_review', () => {
    const rows = [
      { from: 'received', to: 'reconciling', actor: 'system' },
      { from: 'reconciling', to: 'applied', actor: 'system' },
      { from: 'reconciling', to: 'manual_review', actor: 'system' },
      { from: 'manual_review', to: 'rejected', actor: 'operator:ops' },
    ];
    expect(problems(rows)).toEqual(['2:after_terminal', '2:broken_chain', '3:after_terminal']);
  });

  it('rejects the system leaving manual_review, and an operator deciding a reconciling run', () => {
    expect(
      problems([
        { from: 'received', to: 'reconciling', actor: 'system' },
        { from: 'reconciling', to: 'manual_review', actor: 'system' },
        { from: 'manual_review', to: 'applied', actor: 'system' },
      ]),
    ).toEqual(['2:actor_not_allowed']);
    expect(
      problems([
        { from: 'received', to: 'reconciling', actor: 'system' },
        { from: 'reconciling', to: 'rejected', actor: 'operator:eve' },
      ]),
    ).toEqual(['1:actor_not_allowed']);
  });

  it('rejects a transition the machine does not have, and states it does not know', () => {
    expect(problems([{ from: 'received', to: 'applied', actor: 'system' }])).toEqual(['0:not_allowed']);
    expect(problems([{ from: 'received', to: 'settled', actor: 'system' }])).toEqual(['0:not_allowed']);
  });
});
