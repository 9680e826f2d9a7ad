// A6, A10, A21: the tests of what the database itself refuses connect twice, as the application role the processes
// use and as the owner that set the guards up; both pools are closed after the file. And the outcome of a statement
// as a string, so a table of statements can expect each refusal by its message.
import { afterAll } from 'vitest';
import { createDatabase } from '../../src/db/client.js';
import { TEST_APP_DATABASE_URL, TEST_DATABASE_URL } from './env.js';

/** The application role's and the owner's pools (connected on their first query), closed after the file's tests. */
export function roleDatabases(max: { app: number; owner: number }) {
  const app = createDatabase(TEST_APP_DATABASE_URL, { max: max.app });
  const owner = createDatabase(TEST_DATABASE_URL, { max: max.owner });
  afterAll(async () => {
    await app.close();
    await owner.close();
  });
  return { app, owner };
}

/** The error message of a statement, or 'ok'. */
export const attempt = (run: Promise<unknown>) =>
  run.then(
    () => 'ok',
    (e: Error) => e.message,
  );
