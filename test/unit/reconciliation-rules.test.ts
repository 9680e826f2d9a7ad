// I7: the state machine file parses into the rules the workflow enforces; bad files are refused by key.
import { describe, expect, it } from 'vitest';
import { loadReconciliationRules, parseRules } from '../../src/inbound/load-rules.js';
import { assertTransition, IllegalTransitionError } from '../../src/inbound/state-machine.js';

const rules = loadReconciliationRules();

describe('I7 reconciliation state machine', () => {
  it('I7 config/reconciliation-states.yaml declares exactly the I7 transitions', () => {
    expect(rules.initial).toBe('received');
    expect(rules.terminal.sort()).toEqual(['applied', 'rejected']);
    expect(rules.transitions.map((t) => `${t.from}>${t.to}:${t.by}`).sort()).toEqual([
      'manual_review>applied:operator',
      'manual_review>rejected:operator',
      'received>reconciling:system',
      'reconciling>applied:system',
      'reconciling>manual_review:system',
      'reconciling>rejected:system',
    ]);
  });

  it.each([
    ['received', 'reconciling', 'system', true],
    ['reconciling', 'applied', 'system', true],
    ['reconciling', 'manual_review', 'system', true],
    ['manual_review', 'applied', 'operator', true],
    ['manual_review', 'applied', 'system', false], // only an operator leaves manual_review
    ['received', 'applied', 'system', false],
    ['applied', 'rejected', 'system', false],
    ['rejected', 'applied', 'operator', false],
    ['reconciling', 'applied', 'operator', false],
  ] as const)('I7 %s → %s by %s allowed: %s', (from, to, by, allowed) => {
    const check = () => assertTransition(rules, from, to, by);
    if (allowed) expect(check).not.toThrow();
    else expect(check).toThrow(IllegalTransitionError);
  });

  it.each([
    [{ initial: 'nowhere', terminal: ['applied'], transitions: [{ from: 'received', to: 'applied', by: 'system' }] }, 'initial'],
    [{ initial: 'received', terminal: ['applied'], transitions: [{ from: 'applied', to: 'rejected', by: 'system' }] }, 'transitions.0.from'],
    [{ initial: 'received', terminal: ['applied'], transitions: [{ from: 'received', to: 'applied', by: 'robot' }] }, 'transitions.0.by'],
    [{ initial: 'received', terminal: ['applied'], transitions: [], extra: 1 }, 'transitions'],
  ])('I7 an invalid state file is refused naming the key (%#)', (document, key) => {
    expect(() => parseRules(document)).toThrow(new RegExp(key.replace(/\./g, '\\.')));
  });
});
