// R4: the classification of src/lib/errors.ts against errors the real PostgreSQL and the real driver produce
// (through drizzle, which wraps them with the query and its parameters).
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { classifyError } from '../../src/lib/errors.js';
import { useWorld } from '../helpers/world.js';

let database: Database;
const world = useWorld({ label: 'error-classification' });
beforeAll(() => {
  database = world.database;
});

const failureOf = (query: Promise<unknown>) => query.then(() => expect.fail('the query should have failed'), (error: unknown) => error);

describe('R4 real database errors', () => {
  it('R4 a 19-digit amount overflows bigint: InvalidData, not retried, and the message has no parameter', async () => {
    const error = await failureOf(database.db.execute(sql`select ${'9999999999999999999'}::bigint`));
    const classified = classifyError(error);
    expect(classified).toMatchObject({ retryable: false, type: 'InvalidData' });
    expect(classified.message).toMatch(/^PostgreSQL 22003 numeric_value_out_of_range/);
    expect(classified.message).not.toContain('9999999999999999999');
  });

  it('R4 text with U+0000: InvalidData', async () => {
    const error = await failureOf(database.db.execute(sql`select ${'checked\u0000'}::text`));
    expect(classifyError(error)).toMatchObject({ retryable: false, type: 'InvalidData' });
  });

  it('R4 a unique violation: ConstraintViolation', async () => {
    const error = await failureOf(
      database.db.transaction(async (tx) => {
        await tx.execute(sql`create temporary table r4_uq (id int primary key) on commit drop`);
        await tx.execute(sql`insert into r4_uq values (1), (1)`);
      }),
    );
    expect(classifyError(error)).toMatchObject({ retryable: false, type: 'ConstraintViolation' });
  });

  it('R4 a database that refuses connections: retryable NetworkError', async () => {
    const closed = createDatabase('postgres://postgres@127.0.0.1:1/nowhere', { max: 1 });
    try {
      const error = await failureOf(closed.db.execute(sql`select 1`));
      expect(classifyError(error)).toMatchObject({ retryable: true, type: 'NetworkError', message: 'network error ECONNREFUSED' });
    } finally {
      await closed.close();
    }
  });
});
