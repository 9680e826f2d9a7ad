// I7: reads and validates config/reconciliation-states.yaml (zod) once per process; the result travels in the
// workflow input so the workflow never reads files and a replay sees the rules its run started with.
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import type { ReconciliationRules } from '../shared/inbound.js';
import { RECONCILIATION_STATES } from './state-machine.js';

export const RULES_PATH = new URL('../../config/reconciliation-states.yaml', import.meta.url).pathname;

const state = z.enum(RECONCILIATION_STATES);

export const rulesSchema = z
  .strictObject({
    initial: state,
    terminal: z.array(state).min(1),
    transitions: z.array(z.strictObject({ from: state, to: state, by: z.enum(['system', 'operator']) })).min(1),
  })
  .superRefine((rules, ctx) => {
    rules.transitions.forEach((t, i) => {
      if (rules.terminal.includes(t.from)) {
        ctx.addIssue({ code: 'custom', path: ['transitions', i, 'from'], message: `${t.from} is terminal: nothing leaves it` });
      }
      if (t.from === t.to) ctx.addIssue({ code: 'custom', path: ['transitions', i], message: 'a transition must change the state' });
    });
    const seen = new Set(rules.transitions.map((t) => `${t.from}>${t.to}>${t.by}`));
    if (seen.size !== rules.transitions.length) ctx.addIssue({ code: 'custom', path: ['transitions'], message: 'duplicate transition' });
  });

export class RulesError extends Error {
  override name = 'RulesError';
}

export function parseRules(document: unknown, source = 'reconciliation states'): ReconciliationRules {
  const result = rulesSchema.safeParse(document);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => `  ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  throw new RulesError(`invalid ${source}:\n${lines.join('\n')}`);
}

const cache = new Map<string, ReconciliationRules>();

export function loadReconciliationRules(path = RULES_PATH): ReconciliationRules {
  let rules = cache.get(path);
  if (!rules) {
    rules = parseRules(parseYaml(readFileSync(path, 'utf8')), path);
    cache.set(path, rules);
  }
  return rules;
}
