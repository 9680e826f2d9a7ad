// Applies drizzle/ migrations: `npm run db:migrate` (DATABASE_URL, default the local stack's apipay database).
import { fileURLToPath } from 'node:url';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import { createDatabase } from './client.js';

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url));

export async function runMigrations(url: string): Promise<void> {
  const database = createDatabase(url, { max: 1, statementTimeoutMs: 0 }) // a migration may build an index for minutes;
  try {
    await migrate(database.db, { migrationsFolder: MIGRATIONS_FOLDER });
  } finally {
    await database.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const urls = process.argv.slice(2);
  if (urls.length === 0) urls.push(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5433/apipay');
  for (const url of urls) {
    await runMigrations(url);
    console.log(`migrated ${url.replace(/\/\/[^@]*@/, '//')}`);
  }
}
