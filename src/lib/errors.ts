// R4: is an error worth retrying? (The database's side of the answer is src/db/errors.ts, the type names the
// workflows refuse to retry are src/shared/failures.ts; both are the source of what this file decides.) Infrastructure trouble (connections refused or reset, timeouts, PostgreSQL
// serialization failures and deadlocks, a provider's 5xx) heals by itself and is retried; a deterministic error
// (validation, constraint violation, numeric overflow, invalid text, missing secret, unknown type) fails the same
// way every time and is thrown as a non-retryable ApplicationFailure, which the workflows turn into a state an
// operator sees. Messages are rebuilt from codes and names: never a query's parameters, a body or a secret.
import { activityInfo } from '@temporalio/activity';
import { ApplicationFailure, TemporalFailure } from '@temporalio/common';
import { CONNECTION_ERROR_CODES, isTransientSqlState } from '../db/errors.js';
import { DOMAIN_ERROR_NAMES, type ClassifiedFailureType } from '../shared/failures.js';

export interface Classification {
  retryable: boolean;
  /** The ApplicationFailure type: our error's name, or a class such as InvalidData, ConstraintViolation. */
  type: ClassifiedFailureType;
  /** Safe to log, to keep in Temporal's history and to show as a reason. */
  message: string;
}

/** An error we cannot name is presumed infrastructure, but only for this many attempts of one activity. */
export const UNCLASSIFIED_MAX_ATTEMPTS = 10;

/** Our own errors whose messages we write (ids and amounts, no bodies or secrets): kept as they are. */
const DOMAIN_ERRORS: ReadonlySet<string> = new Set(DOMAIN_ERROR_NAMES);
const isDomainError = (name: string): name is (typeof DOMAIN_ERROR_NAMES)[number] => DOMAIN_ERRORS.has(name);

const SQLSTATE_NAMES: Record<string, string> = {
  '22001': 'string_data_right_truncation', '22003': 'numeric_value_out_of_range', '22007': 'invalid_datetime_format',
  '22008': 'datetime_field_overflow', '22021': 'character_not_in_repertoire', '22P02': 'invalid_text_representation',
  '22P05': 'untranslatable_character', '23502': 'not_null_violation', '23503': 'foreign_key_violation',
  '23505': 'unique_violation', '23514': 'check_violation', '40001': 'serialization_failure', '40P01': 'deadlock_detected',
  '57014': 'query_canceled', '57P01': 'admin_shutdown', '53300': 'too_many_connections', 'P0001': 'raise_exception',
};

type Coded = Error & { code?: unknown; status?: unknown; table_name?: string; column_name?: string; constraint_name?: string };

/** The error and its causes (drizzle wraps the driver's error; fetch wraps the socket's). */
function chain(error: unknown): Coded[] {
  const out: Coded[] = [];
  for (let e: unknown = error; e instanceof Error && out.length < 6; e = (e as { cause?: unknown }).cause) out.push(e as Coded);
  return out;
}

function postgres(code: string, e: Coded): Classification {
  const name = SQLSTATE_NAMES[code] ?? 'error';
  const where = [e.table_name && `table ${e.table_name}`, e.column_name && `column ${e.column_name}`, e.constraint_name && `constraint ${e.constraint_name}`]
    .filter(Boolean)
    .join(', ');
  const message = `PostgreSQL ${code} ${name}${where ? ` (${where})` : ''}`;
  if (isTransientSqlState(code)) return { retryable: true, type: 'DatabaseUnavailable', message };
  if (code.startsWith('22')) return { retryable: false, type: 'InvalidData', message };
  if (code.startsWith('23')) return { retryable: false, type: 'ConstraintViolation', message };
  return { retryable: false, type: 'DatabaseRefused', message };
}

const safeText = (text: string) => text.replace(/[\u0000-\u001f\u007f]+/g, ' ').slice(0, 300);

export function classifyError(error: unknown): Classification {
  const errors = chain(error);
  for (const e of errors) {
    if (isDomainError(e.name)) return { retryable: false, type: e.name, message: safeText(e.message) };
    const code = typeof e.code === 'string' ? e.code : undefined;
    if (code && /^[0-9A-Z]{5}$/.test(code) && 'severity' in e) return postgres(code, e);
    if (code && (CONNECTION_ERROR_CODES.has(code) || code.startsWith('UND_ERR'))) return { retryable: true, type: 'NetworkError', message: `network error ${code}` };
    if (e.name === 'TimeoutError' || e.name === 'AbortError') return { retryable: true, type: 'Timeout', message: safeText(e.message) };
    if (e.name === 'ProviderApiError') {
      const status = typeof e.status === 'number' ? e.status : null;
      const retryable = status === null || status >= 500 || status === 429 || status === 408;
      return { retryable, type: retryable ? 'ProviderUnavailable' : 'ProviderRefused', message: safeText(e.message) };
    }
  }
  const first = errors[0];
  if (!first) return { retryable: false, type: 'ProgrammingError', message: `non-error thrown: ${typeof error}` };
  // A bug or bad data in our own code: the same input fails the same way (BigInt('x'), new Date('x').toISOString()).
  if (['TypeError', 'RangeError', 'SyntaxError', 'ReferenceError', 'ZodError'].includes(first.name)) {
    return { retryable: false, type: 'ProgrammingError', message: safeText(`${first.name}: ${first.message}`) };
  }
  // drizzle's "Failed query: … params: …" carries the row: never repeat it.
  const message = first.message.startsWith('Failed query:') ? 'database query failed' : safeText(first.message);
  return { retryable: true, type: 'UnclassifiedError', message };
}

/** What an activity throws for `error` on its `attempt`-th try: an ApplicationFailure with a safe message. */
export function toActivityFailure(error: unknown, attempt: number): Error {
  if (error instanceof TemporalFailure) return error; // already decided (ApplicationFailure, cancellation)
  const { retryable, type, message } = classifyError(error);
  if (!retryable) return ApplicationFailure.nonRetryable(message, type);
  if (type === 'UnclassifiedError' && attempt >= UNCLASSIFIED_MAX_ATTEMPTS) {
    return ApplicationFailure.nonRetryable(`gave up after ${attempt} attempts: ${message}`, type);
  }
  return ApplicationFailure.retryable(message, type);
}

function currentAttempt(): number {
  try {
    return activityInfo().attempt;
  } catch {
    return 1; // called outside an activity (tests call activities directly)
  }
}

type AsyncFunctions = Record<string, (...args: never[]) => Promise<unknown>>;

/** Wraps every activity so that whatever it throws is classified (R4). */
export function withClassifiedErrors<T extends AsyncFunctions>(activities: T): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(activities)) {
    wrapped[name] = async (...args: never[]) => {
      try {
        return await fn(...args);
      } catch (error) {
        throw toActivityFailure(error, currentAttempt());
      }
    };
  }
  return wrapped as T;
}
