// What a CLI command is (src/cli/commands.ts holds the table) and how commands read their arguments: required and
// optional flags, operator text (R2), dates and closed word sets (C9), and the query every list shares.
import type { ParseArgsConfig } from 'node:util';
import { OPERATOR_DATE_HINT, parseOperatorDate } from '../shared/operator-date.js';
import { OPERATOR_MAX, REASON_MAX, textProblem } from '../shared/operator-input.js';

type Options = NonNullable<ParseArgsConfig['options']>;
export type Values = Record<string, string | boolean | undefined>;

export interface ApiRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | undefined>;
  body?: Record<string, unknown>;
  /** The response is text (CSV), printed as it is. */
  raw?: boolean;
  /** M11: secret destination fields read by run.ts (file, environment or a prompt) into body.destination. */
  secrets?: SecretInput[];
}

/** A secret to read (a file, an environment variable, or a prompt when neither is given); never on the command line. */
export interface SecretInput {
  field: string;
  label: string;
  file?: string;
  env?: string;
}

export interface Command {
  /** `group command`, or one word for a command of its own (`portal-link`). */
  words: [string, string] | [string];
  args?: string[];
  options?: Options;
  summary: string;
  build(values: Values, args: string[]): ApiRequest;
  /** The exit code for a successful answer (default 0): `ledger check` exits 1 when it found violations. */
  exitCode?(body: unknown): number;
  /** What to print instead of the JSON answer (`portal-link` prints its URL). */
  format?(body: unknown): string;
}

export class UsageError extends Error {
  override name = 'UsageError';
}

export const str = { type: 'string' } as const;
export const cursorPage = { cursor: str, limit: str } as const;
export const page = { ...cursorPage, order: str, since: str, until: str } as const;
export const PAGE_HELP = '[--order asc|desc] [--since DATE] [--until DATE] [--limit N] [--cursor C]';
export const operator = { operator: str, reason: str } as const;
export const seg = encodeURIComponent;

export function required(values: Values, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}
export const optional = (values: Values, name: string) =>
  typeof values[name] === 'string' ? (values[name] as string) : undefined;
/** R2: operator text checked before it is sent (the API checks again). */
export function operatorText(values: Values, name: 'operator' | 'reason'): string {
  const value = required(values, name);
  const problem = textProblem(value, name === 'operator' ? OPERATOR_MAX : REASON_MAX);
  if (problem) throw new UsageError(`--${name} ${problem}`);
  return value;
}
/** A2: the operator is the API key; a given --operator is checked like other operator text (the API checks it is yours). */
export function optionalOperatorText(values: Values, name: 'operator'): string | undefined {
  return values[name] === undefined ? undefined : operatorText(values, name);
}
/** C9: a plain day (2026-12-01, sent as midnight UTC) or a full ISO date-time (sent as typed). */
export function date(values: Values, name: string): string | undefined {
  const text = optional(values, name)?.trim();
  if (text === undefined) return undefined;
  if (!parseOperatorDate(text)) throw new UsageError(`--${name} ${OPERATOR_DATE_HINT}`);
  return text.includes('T') || text.includes('t') ? text : `${text}T00:00:00Z`;
}
/** C9: a closed set of words accepted in any case, sent in the API's spelling. */
export function oneOf(values: Values, name: string, allowed: readonly string[]): string | undefined {
  const text = optional(values, name);
  if (text === undefined) return undefined;
  const found = allowed.find((a) => a.toLowerCase() === text.trim().toLowerCase());
  if (!found) throw new UsageError(`--${name} must be one of ${allowed.join(', ')} (any case)`);
  return found;
}
/** The query every list shares: cursor, limit, order and the creation-time window (since inclusive, until exclusive). */
export const pageQuery = (v: Values) => ({
  cursor: optional(v, 'cursor'),
  limit: optional(v, 'limit'),
  order: oneOf(v, 'order', ['asc', 'desc']),
  from: date(v, 'since'),
  to: date(v, 'until'),
});

export const list = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
/** Only the fields the operator gave, so PATCH changes nothing else. */
export const defined = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
