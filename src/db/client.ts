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

export function createDatabase(url: string, options: { max?: number } = {}): Database {
  const sql = postgres(url, { max: options.max ?? 20, onnotice: () => {}, connect_timeout: 10 });
  const db = drizzle(sql, { schema });
  return { db, sql, close: () => sql.end({ timeout: 5 }) };
}
