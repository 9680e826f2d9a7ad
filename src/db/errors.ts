// Tells a failure of the database (connection, resources, cancelled or timed-out statement) from a failure caused
// by the data of one statement (constraint, invalid text, deadlock with a neighbour): only the latter is worth
// retrying piece by piece.
import postgres from 'postgres';

// 08 connection exception, 53 insufficient resources, 57 operator intervention (statement_timeout, shutdown),
// 58 system error.
const TRANSIENT_SQLSTATE_CLASSES = new Set(['08', '53', '57', '58']);
const CONNECTION_CODES = /^(CONNECTION_\w+|CONNECT_TIMEOUT|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND)$/;

export function isTransientDbError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  if (error instanceof postgres.PostgresError) return TRANSIENT_SQLSTATE_CLASSES.has(code.slice(0, 2));
  return CONNECTION_CODES.test(code);
}
