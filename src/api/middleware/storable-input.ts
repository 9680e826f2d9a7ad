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
      const problem = body === undefined ? null : jsonPgProblem(body);
      if (problem) refuse('body', problem);
    }
    await next();
  };
}
