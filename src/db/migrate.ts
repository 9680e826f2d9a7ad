// Applies drizzle/ migrations as the owner, then the application role's grants (A6): `npm run db:migrate`
// (MIGRATION_DATABASE_URL, default the local stack's apipay database as postgres; role DATABASE_APP_ROLE).
import { fileURLToPath } from 'node:url';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import { createDatabase } from './client.js';
import { applyGrants, DEFAULT_APP_ROLE, ensureRole } from './grants.js';

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url));
export const DEFAULT_MIGRATION_URL = 'postgres://postgres@127.0.0.1:5433/apipay';

/** `appRole: null` skips the grant step (a database whose processes still connect as the owner). */
export async function runMigrations(url: string, options: { appRole?: string | null } = {}): Promise<{ unlisted: string[] }> {
  const database = createDatabase(url, { max: 1, statementTimeoutMs: 0 }); // a migration may build an index for minutes
  try {
    await migrate(database.db, { migrationsFolder: MIGRATIONS_FOLDER });
    const role = options.appRole === undefined ? DEFAULT_APP_ROLE : options.appRole;
    if (role === null) return { unlisted: [] };
    await ensureRole(database.sql, role);
    return await applyGrants(database.sql, role);
  } finally {
    await database.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const urls = process.argv.slice(2);
  if (urls.length === 0) urls.push(process.env.MIGRATION_DATABASE_URL ?? DEFAULT_MIGRATION_URL);
  const appRole = process.env.DATABASE_APP_ROLE || DEFAULT_APP_ROLE;
  for (const url of urls) {
    const { unlisted } = await runMigrations(url, { appRole });
    const where = url.replace(/\/\/[^@]*@/, '//');
    if (unlisted.length) console.warn(`warning: ${where}: tables without a grant policy in src/db/grants.ts (given read-write): ${unlisted.join(', ')}`);
    console.log(`migrated ${where}; grants applied to ${appRole}`);
  }
}
