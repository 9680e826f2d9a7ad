// What PostgreSQL can store (R1): text columns and jsonb refuse U+0000, and a lone UTF-16 surrogate has no UTF-8
// form (postgres.js would silently store U+FFFD instead). Pure helpers, shared by every place input enters.

/** The reason a string cannot be stored as PostgreSQL text, or null when it can. */
export type PgTextProblem = 'nul' | 'lone_surrogate' | 'too_long';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function pgTextProblem(value: string, maxLength = Infinity): PgTextProblem | null {
  if (value.includes('\u0000')) return 'nul';
  if (LONE_SURROGATE.test(value)) return 'lone_surrogate';
  if (value.length > maxLength) return 'too_long';
  return null;
}

export function isPgText(value: string, maxLength = Infinity): boolean {
  return pgTextProblem(value, maxLength) === null;
}

export const PG_TEXT_MESSAGES: Record<PgTextProblem, string> = {
  nul: 'must not contain U+0000',
  lone_surrogate: 'must not contain a lone UTF-16 surrogate',
  too_long: 'is too long',
};

/** Makes any string storable: U+0000 and lone surrogates become U+FFFD (for excerpts and messages, never for ids). */
export function toPgText(value: string): string {
  return value.replace(/\u0000/g, '\ufffd').replace(new RegExp(LONE_SURROGATE.source, 'g'), '\ufffd');
}

export type JsonProblem = PgTextProblem | 'non_finite_number' | 'too_deep';

/**
 * The first thing in a parsed JSON value that PostgreSQL (jsonb, or text after a round trip) would refuse or that
 * JSON.stringify would silently change: a key or string value with U+0000 or a lone surrogate, a number that
 * overflowed to ±Infinity (e.g. 1e400), or nesting deeper than maxDepth. Never reports the offending text itself.
 */
export function jsonPgProblem(value: unknown, maxDepth = 64): JsonProblem | null {
  const visit = (node: unknown, depth: number): JsonProblem | null => {
    if (typeof node === 'string') return pgTextProblem(node);
    if (typeof node === 'number') return Number.isFinite(node) ? null : 'non_finite_number';
    if (typeof node !== 'object' || node === null) return null;
    if (depth >= maxDepth) return 'too_deep';
    if (Array.isArray(node)) {
      for (const item of node) {
        const problem = visit(item, depth + 1);
        if (problem) return problem;
      }
      return null;
    }
    for (const [key, item] of Object.entries(node)) {
      const problem = pgTextProblem(key) ?? visit(item, depth + 1);
      if (problem) return problem;
    }
    return null;
  };
  return visit(value, 0);
}
