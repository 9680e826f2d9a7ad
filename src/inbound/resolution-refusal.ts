// R2: the refusals of an operator resolution (./resolution-store.ts). A refusal is an answer, not an error, so
// nothing retries it: a rule the resolution broke (Refused), a ledger rule, or data PostgreSQL refuses the same way on
// every retry (answered with the SQLSTATE only, since the message may quote the operator's text). Anything else is
// infrastructure and is thrown on, to be classified and retried by the activity wrapper (src/lib/errors.ts).
import { CaptureNotPostedError, LedgerConflictError, ReversalExceedsSettledError } from '../ledger/errors.js';
import { LedgerValidationError } from '../ledger/postings.js';

/** A rule the resolution broke, thrown inside its transaction (which rolls back) and answered as a refusal. */
export class Refused extends Error {}

/** The refusal `error` stands for, or undefined when it is infrastructure (thrown on; all or nothing, so a retry is safe). */
export function refusalOf(error: unknown): { status: 'refused'; problem: string } | undefined {
  if (error instanceof Refused) return { status: 'refused', problem: error.message };
  if (error instanceof CaptureNotPostedError)
    return { status: 'refused', problem: `cannot apply: the payment's capture is not in the ledger` };
  if (
    error instanceof ReversalExceedsSettledError ||
    error instanceof LedgerConflictError ||
    error instanceof LedgerValidationError
  ) {
    return { status: 'refused', problem: `cannot apply: ${error.message}` };
  }
  const code = databaseErrorCode(error);
  // Data exceptions (22…) and constraint violations other than a raced unique key (23…) fail the same way on
  // every retry: refuse with the code only (the message may quote the operator's text).
  if (code && (code.startsWith('22') || (code.startsWith('23') && code !== '23505'))) {
    return { status: 'refused', problem: `the database refused the resolution (SQLSTATE ${code}); nothing was written` };
  }
  // Infrastructure (connection, serialization, a raced key): the activity wrapper (src/lib/errors.ts) classifies
  // it and rebuilds its message without the query's parameters; all or nothing, so a retry is safe.
  return undefined;
}

function databaseErrorCode(error: unknown): string | undefined {
  for (
    let e = error as { code?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 4;
    e = e.cause as typeof e, depth++
  ) {
    if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return e.code;
  }
  return undefined;
}
