// Database errors without their parameters (R1). drizzle's DrizzleQueryError puts the query and every parameter in
// its message (event bodies, secrets); postgres.js errors carry `detail` ("Key (id)=(…)") and, for a failed value,
// messages such as `invalid input syntax for type integer: "…"`. Anything that logs or returns a database error
// goes through describeDbError / safeError: SQLSTATE, table, column, constraint and a short message, nothing else.
// isTransientDbError tells a failure of the database (connection, resources, cancelled or timed-out statement) from
// a failure caused by the data of one statement: only the latter is worth retrying piece by piece.
import postgres from 'postgres';

/** The safe fields of a database error. */
export interface DbErrorSummary {
  /** SQLSTATE (e.g. 23505), or the client's code for a connection failure (ECONNREFUSED, CONNECTION_CLOSED, …). */
  code: string;
  table?: string;
  column?: string;
  constraint?: string;
  /** The server's message cut before its first ':' (where PostgreSQL quotes the value) and capped at 120 characters. */
  message: string;
}

interface PgLike {
  name?: string;
  code?: unknown;
  message?: string;
  severity?: unknown;
  table_name?: unknown;
  column_name?: unknown;
  constraint_name?: unknown;
  cause?: unknown;
}

const SQLSTATE = /^[0-9A-Z]{5}$/;

const isPostgresError = (e: PgLike) => e.name === 'PostgresError' || (typeof e.code === 'string' && SQLSTATE.test(e.code) && 'severity' in e);
const isDrizzleQueryError = (e: PgLike) => e.name === 'DrizzleQueryError' || e.constructor?.name === 'DrizzleQueryError';

/** The driver error of `error` when it is a database error itself (a PostgresError, or drizzle's wrapper of any). */
function driverError(error: unknown): PgLike | undefined {
  if (!error || typeof error !== 'object') return undefined;
  const e = error as PgLike;
  if (isPostgresError(e)) return e;
  if (!isDrizzleQueryError(e)) return undefined;
  const cause = e.cause as PgLike | undefined;
  // A client-side failure under drizzle (connection refused, closed, timeout) keeps its code, not its message.
  if (!cause || typeof cause !== 'object') return { code: 'UNKNOWN', message: 'query failed' };
  return isPostgresError(cause) ? cause : { code: typeof cause.code === 'string' ? cause.code : 'UNKNOWN', message: 'query failed' };
}

const str = (value: unknown) => (typeof value === 'string' && value.length > 0 ? value.slice(0, 63) : undefined);

export function shortMessage(message: string | undefined): string {
  const text = (message ?? '').split('\n')[0]!;
  const colon = text.indexOf(':');
  return (colon >= 0 ? text.slice(0, colon) : text).slice(0, 120);
}

/** The safe summary of a database error, or undefined when `error` is not one (nor wraps one). */
export function describeDbError(error: unknown): DbErrorSummary | undefined {
  const pg = driverError(error);
  if (!pg) return undefined;
  const code = typeof pg.code === 'string' ? pg.code.slice(0, 40) : 'UNKNOWN';
  const summary: DbErrorSummary = { code, message: shortMessage(pg.message) };
  const table = str(pg.table_name);
  const column = str(pg.column_name);
  const constraint = str(pg.constraint_name);
  if (table) summary.table = table;
  if (column) summary.column = column;
  if (constraint) summary.constraint = constraint;
  return summary;
}

/**
 * True for an error about the data (the same statement with the same values fails again): SQLSTATE class 22 (data
 * exception: invalid text, out of range), 23 (integrity constraint) and 54 (program limit, e.g. an index row too
 * large). Connection failures, timeouts, serialization failures and server shutdowns are not data errors.
 */
export function isDataError(error: unknown): boolean {
  const code = describeDbError(error)?.code;
  return !!code && SQLSTATE.test(code) && ['22', '23', '54'].includes(code.slice(0, 2));
}

/** A database error's safe stand-in: same code, a message without any value, no query, no parameters. */
export class DatabaseError extends Error {
  override name = 'DatabaseError';
  readonly code: string;
  readonly table?: string;
  readonly constraint?: string;
  readonly column?: string;
  constructor(summary: DbErrorSummary) {
    const where = [summary.table, summary.column ?? summary.constraint].filter(Boolean).join('.');
    super(`database error ${summary.code}${where ? ` (${where})` : ''}: ${summary.message}`);
    this.code = summary.code;
    if (summary.table) this.table = summary.table;
    if (summary.constraint) this.constraint = summary.constraint;
    if (summary.column) this.column = summary.column;
  }
}

/**
 * A database error becomes its DatabaseError stand-in; any other error is returned itself, with a database error
 * in its `cause` chain replaced in place (so an ApplicationFailure keeps its type and retry policy).
 */
export function safeError<T>(error: T): T | DatabaseError {
  const summary = describeDbError(error);
  if (summary) return new DatabaseError(summary);
  let current = error as { cause?: unknown } | undefined;
  for (let depth = 0; current && typeof current === 'object' && depth < 8; depth++) {
    const cause = describeDbError(current.cause);
    if (cause) {
      current.cause = new DatabaseError(cause);
      break;
    }
    current = current.cause as { cause?: unknown } | undefined;
  }
  return error;
}

// The one classification of database trouble that heals by itself (R4): src/lib/errors.ts (activities) and the
// receipt writer's batch split both use it. 08 connection exception, 40001 serialization failure, 40P01 deadlock,
// 53 insufficient resources, 55P03 lock not available, 57 operator intervention (statement timeout, shutdown),
// 58 system error.
const TRANSIENT_SQLSTATE = /^(08|40001|40P01|53|55P03|57|58)/;

/** Error codes of a connection that failed or went away: the socket's (any client) and postgres.js's own. */
export const CONNECTION_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN',
  'EAI_AGAIN', 'ENOTFOUND', 'EADDRNOTAVAIL',
  'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT',
]);

/** True for a SQLSTATE of a database that is busy, restarting or unreachable, or of a transaction that lost a race. */
export function isTransientSqlState(code: string): boolean {
  return SQLSTATE.test(code) && TRANSIENT_SQLSTATE.test(code);
}

export function isTransientDbError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  if (error instanceof postgres.PostgresError) return isTransientSqlState(code);
  return CONNECTION_ERROR_CODES.has(code);
}
