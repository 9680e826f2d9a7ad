// R1/R10 for the admin API: a query parameter, path segment or JSON body string that PostgreSQL would refuse
// (U+0000, a lone surrogate; in JSON also a number that overflowed) is a 400 naming where it is, before any route
// runs — so no route can turn it into a database error (a 5xx) or a half-written change. The text itself is never
// echoed back.
import type { MiddlewareHandler } from 'hono';
import { jsonPgProblem, PG_TEXT_MESSAGES, pgTextProblem } from '../../shared/pg-text.js';

import { ApiError } from '../errors.js';

const MESSAGES: Record<string, string> = {
  ...PG_TEXT_MESSAGES,
  non_finite_number: 'has a number out of range',
  too_deep: 'is nested too deeply',
};

const refuse = (field: string, problem: string): never => {
  throw new ApiError('validation_failed', `${field}: ${MESSAGES[problem] ?? problem}`, {
    issues: [{ field, message: MESSAGES[problem] ?? problem }],
  });
};

export function storableInput(): MiddlewareHandler {
  return async (c, next) => {
    let path: string;
    try {
      path = decodeURIComponent(new URL(c.req.url).pathname);
    } catch {
      return refuse('path', 'is not valid percent-encoding');
    }
    const pathProblem = pgTextProblem(path);
    if (pathProblem) refuse('path', pathProblem);
    for (const [name, values] of Object.entries(c.req.queries())) {
      const problem = pgTextProblem(name) ?? values.map((v) => pgTextProblem(v)).find(Boolean) ?? null;
      if (problem) refuse(`query.${pgTextProblem(name) ? '(name)' : name}`, problem);
    }
    if ((c.req.header('content-type') ?? '').includes('json')) {
      // Hono caches the parsed body, so the route's validator reads the same value; bad JSON is its to report.
      const body: unknown = await c.req.json().catch(() => undefined);
      const found = body === undefined ? null : firstProblem(body, []);
      if (found) refuse(found.field, found.problem);
    }
    await next();
  };
}

/** The first value PostgreSQL would refuse and where it is (`reason`, `event_types.2`; a bad key: its parent), or null. */
function firstProblem(node: unknown, path: string[]): { field: string; problem: string } | null {
  const field = path.join('.') || 'body';
  if (typeof node !== 'object' || node === null) {
    const problem = jsonPgProblem(node);
    return problem ? { field, problem } : null;
  }
  if (path.length > 64) return { field, problem: 'too_deep' };
  for (const [key, value] of Object.entries(node)) {
    const keyProblem = pgTextProblem(key);
    if (keyProblem) return { field: `${field} (a key)`, problem: keyProblem };
    const found = firstProblem(value, [...path, key]);
    if (found) return found;
  }
  return null;
}
