// R1 database errors without their parameters: what describeDbError keeps, what isDataError calls data, and what
// the process logger writes for a wrapped drizzle error.
import { Writable } from 'node:stream';
import { DrizzleQueryError } from 'drizzle-orm/errors';
import { describe, expect, it } from 'vitest';
import postgres from 'postgres';
import { DatabaseError, describeDbError, isDataError, isTransientDbError, safeError } from '../../src/db/errors.js';
import { classifyError } from '../../src/lib/errors.js';
import { createLogger } from '../../src/lib/logger.js';

/** Shaped like postgres.js's PostgresError: Object.assign of the server's fields. */
function postgresError(fields: Record<string, string>): Error {
  const error = new Error(fields.message);
  error.name = 'PostgresError';
  return Object.assign(error, { severity: 'ERROR', ...fields });
}
const BODY = '{"note":"BODYSECRET"}';
const wrapped = (cause: unknown) => new DrizzleQueryError('insert into "events" values ($1, $2)', ['evt_1', BODY], cause as Error);

describe('R1 describeDbError', () => {
  it('R1 keeps SQLSTATE, table, constraint and the message before its quoted value', () => {
    const error = wrapped(
      postgresError({ code: '22P02', message: 'invalid input syntax for type bigint: "BODYSECRET"', table_name: 'events', column_name: 'created_unix', detail: 'Key (id)=(BODYSECRET)' }),
    );
    expect(describeDbError(error)).toEqual({ code: '22P02', table: 'events', column: 'created_unix', message: 'invalid input syntax for type bigint' });
  });

  it('R1 a connection failure under drizzle keeps its client code only', () => {
    const cause = Object.assign(new Error(`write CONNECTION_CLOSED 127.0.0.1:5433 ${BODY}`), { code: 'CONNECTION_CLOSED' });
    expect(describeDbError(wrapped(cause))).toEqual({ code: 'CONNECTION_CLOSED', message: 'query failed' });
    expect(isDataError(wrapped(cause))).toBe(false);
  });

  it.each([
    ['22021', true],
    ['22003', true],
    ['23505', true],
    ['23514', true],
    ['54000', true],
    ['40001', false],
    ['57P01', false],
    ['08006', false],
    ['53300', false],
  ])('R1 SQLSTATE %s is a data error: %s', (code, data) => {
    expect(isDataError(wrapped(postgresError({ code, message: 'x' })))).toBe(data);
  });

  it('R1 other errors are not database errors and pass through safeError unchanged', () => {
    const error = new Error('plain');
    expect(describeDbError(error)).toBeUndefined();
    expect(safeError(error)).toBe(error);
  });

  it('R1 safeError replaces a database error in a cause chain, keeping the outer error', () => {
    const outer = new Error('activity failed', { cause: wrapped(postgresError({ code: '23505', message: 'duplicate key value violates unique constraint "x"' })) });
    expect(safeError(outer)).toBe(outer);
    expect(outer.cause).toBeInstanceOf(DatabaseError);
    expect(String((outer.cause as Error).message)).toBe('database error 23505: duplicate key value violates unique constraint "x"');
  });
});

describe('R1 the process logger', () => {
  it('R1 a logged drizzle error has its SQLSTATE and table and none of its parameters or query', () => {
    const lines: string[] = [];
    const logger = createLogger('t', 'info', new Writable({ write: (chunk, _e, done) => (lines.push(chunk.toString()), done()) }));
    const error = wrapped(postgresError({ code: '22021', message: 'invalid byte sequence for encoding "UTF8": 0x00', table_name: 'events', where: `unnamed portal parameter $2 = '${BODY}'` }));
    logger.error({ err: error }, 'insert failed');
    logger.warn({ error }, 'insert failed');
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line).toContain('22021');
      expect(line).toContain('events');
      expect(line).not.toContain('BODYSECRET');
      expect(line).not.toContain('insert into');
    }
  });
});

describe('R4 one classification of database trouble', () => {
  // isTransientDbError (the receipt writer's batch split) and classifyError (activities) read the same table.
  const pg = (code: string) => Object.assign(new postgres.PostgresError({ message: 'x' } as never), { code, severity: 'ERROR' });
  it.each(['08006', '40001', '40P01', '53300', '55P03', '57014', '57P01', '58030', '22003', '23505', '42703', 'P0001'])(
    'R4 SQLSTATE %s: transient for both or for neither',
    (code) => {
      expect(isTransientDbError(pg(code))).toBe(classifyError(pg(code)).retryable);
    },
  );
  it('R4 a deadlock and a serialization failure are transient (retried, not split row by row)', () => {
    expect(isTransientDbError(pg('40P01'))).toBe(true);
    expect(isTransientDbError(pg('40001'))).toBe(true);
    expect(isTransientDbError(pg('23505'))).toBe(false);
  });
  it('R4 a lost connection is transient for both', () => {
    const lost = Object.assign(new Error('write CONNECTION_CLOSED'), { code: 'CONNECTION_CLOSED' });
    expect(isTransientDbError(lost)).toBe(true);
    expect(classifyError(lost).retryable).toBe(true);
  });
});
