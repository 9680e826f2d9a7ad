// P11: a database of one test file's own, beside the shared test database on the same PostgreSQL (named after it,
// `<test database>_<suffix>`). A file that starts real worker processes (their receipts sweep and outbox relay read
// every row they can see) runs on one of these instead of waiting for the serial tier; the image tree migrates one
// as the migration Job would. `appProcessEnv` is what such a file's real app processes are given.
import postgres from 'postgres';
import { runMigrations } from '../../src/db/migrate.js';
import { KAFKA_BROKERS, TEMPORAL_ADDRESS, TEST_ADMIN_TOKEN, TEST_DATABASE_URL, TEST_SECRETS_KEY } from './env.js';
import { TEST_PROVIDER_SECRETS } from './profile.js';

export interface PrivateDatabase {
  /** As the owner (postgres), like TEST_DATABASE_URL. */
  ownerUrl: string;
  /** As the application role, like TEST_APP_DATABASE_URL. */
  appUrl: string;
  /** Drops what an earlier run left and creates it empty; `migrate` also applies drizzle/ and the role's grants. */
  create(options?: { migrate?: boolean }): Promise<void>;
  drop(): Promise<void>;
}

export function privateDatabase(suffix: string): PrivateDatabase {
  const owner = new URL(TEST_DATABASE_URL);
  owner.pathname = `${owner.pathname}_${suffix}`;
  const app = new URL(owner);
  app.username = process.env.DATABASE_APP_ROLE ?? 'apipay_app';
  app.password = '';
  const name = owner.pathname.slice(1);
  const onServer = async (statement: string) => {
    const admin = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
    try {
      await admin.unsafe(statement);
    } finally {
      await admin.end();
    }
  };
  return {
    ownerUrl: owner.toString(),
    appUrl: app.toString(),
    async create(options = {}) {
      await onServer(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await onServer(`CREATE DATABASE "${name}"`);
      if (options.migrate) await runMigrations(owner.toString());
    },
    drop: () => onServer(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}

/**
 * The environment of a real app process on `database` (as the application role) and a Temporal namespace of the
 * file's own (the processes poll the real task-queue names), on the stack's Kafka, with the test secrets.
 */
export function appProcessEnv(database: PrivateDatabase, namespace: string): Record<string, string> {
  return {
    ...TEST_PROVIDER_SECRETS,
    LOG_LEVEL: 'warn',
    DATABASE_URL: database.appUrl,
    DATABASE_POOL_MAX: '4',
    TEMPORAL_ADDRESS,
    TEMPORAL_NAMESPACE: namespace,
    KAFKA_BROKERS: KAFKA_BROKERS.join(','),
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY.toString('base64'),
  };
}
