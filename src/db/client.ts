// One postgres.js pool and its drizzle handle per process, built from the parsed environment.
import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import * as schema from './schema/index.js';

export type Db = PostgresJsDatabase<typeof schema>;
export interface Database {
  db: Db;
  sql: postgres.Sql;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  max?: number;
  /** R5: statement_timeout of every connection in ms (0 = none); default 30 s. */
  statementTimeoutMs?: number;
  /** R5: idle_in_transaction_session_timeout of every connection in ms (0 = none); default 60 s. */
  idleInTransactionTimeoutMs?: number;
}

export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;
export const DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;

export function createDatabase(url: string, options: DatabaseOptions = {}): Database {
  const sql = postgres(url, {
    max: options.max ?? 20,
    onnotice: () => {},
    connect_timeout: 10,
    // Startup parameters: set on each connection as it opens, so no query ever runs without them.
    connection: {
      statement_timeout: options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
      idle_in_transaction_session_timeout: options.idleInTransactionTimeoutMs ?? DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    },
  });
  const db = drizzle(sql, { schema });
  return { db, sql, close: () => sql.end({ timeout: 5 }) };
}

/** The pool options the processes take from the environment (src/config/env.ts). */
export function databaseOptions(env: {
  DATABASE_POOL_MAX: number;
  DATABASE_STATEMENT_TIMEOUT_MS: number;
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: number;
}): DatabaseOptions {
  return {
    max: env.DATABASE_POOL_MAX,
    statementTimeoutMs: env.DATABASE_STATEMENT_TIMEOUT_MS,
    idleInTransactionTimeoutMs: env.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS,
  };
}

/** A drizzle transaction handle, as `db.transaction` passes it. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

/**
 * P14: the postgres.js client under a drizzle handle — the pool for a `Db`, the transaction's own connection for a
 * `Tx` — for the statements that bind one array per column (INSERT … SELECT FROM unnest): drizzle's builder makes an
 * object per value of a multi-row VALUES list, which cost the dispatcher more CPU than the rest of its fan-out.
 */
export function rawClient(handle: Db | Tx): postgres.Sql {
  const withClient = handle as unknown as { $client?: postgres.Sql; session?: { client: postgres.Sql } };
  const client = withClient.session?.client ?? withClient.$client;
  if (!client) throw new Error('rawClient: not a drizzle postgres-js handle');
  return client;
}
