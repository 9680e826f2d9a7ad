// R4: the error classification of src/lib/errors.ts (what is retried, under which type, with which message) and
// the activity wrapper that throws it as an ApplicationFailure. Real PostgreSQL errors: test/integration/error-classification.test.ts.
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { classifyError, toActivityFailure, UNCLASSIFIED_MAX_ATTEMPTS, withClassifiedErrors } from '../../src/lib/errors.js';
import { LedgerConflictError } from '../../src/ledger/errors.js';
import { LedgerValidationError } from '../../src/ledger/postings.js';
import { ProviderApiError } from '../../src/providers/payments-api.js';
import { NON_RETRYABLE_ERROR_TYPES } from '../../src/shared/failures.js';

/** The shape postgres.js gives a server error (PostgresError), wrapped the way drizzle wraps it. */
function pgError(code: string, extra: Record<string, string> = {}) {
  const cause = Object.assign(new Error(`server says something about "secret-value"`), { name: 'PostgresError', severity: 'ERROR', code, ...extra });
  return Object.assign(new Error('Failed query: insert into x values ($1)\nparams: 4111111111111111,secret-value'), { name: 'DrizzleQueryError', cause });
}
const syscall = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:5433`), { code, syscall: 'connect' });

describe('R4 classifyError', () => {
  it.each([
    ['connection refused', syscall('ECONNREFUSED'), 'NetworkError'],
    ['connection reset', syscall('ECONNRESET'), 'NetworkError'],
    ['a socket timeout', syscall('ETIMEDOUT'), 'NetworkError'],
    ['postgres.js losing its connection', Object.assign(new Error('write CONNECTION_CLOSED'), { code: 'CONNECTION_CLOSED' }), 'NetworkError'],
    ['fetch failed (undici, cause ECONNRESET)', new TypeError('fetch failed', { cause: syscall('ECONNRESET') }), 'NetworkError'],
    ['an abort timeout', Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' }), 'Timeout'],
    ['a serialization failure', pgError('40001'), 'DatabaseUnavailable'],
    ['a deadlock', pgError('40P01'), 'DatabaseUnavailable'],
    ['an admin shutdown', pgError('57P01'), 'DatabaseUnavailable'],
    ['too many connections', pgError('53300'), 'DatabaseUnavailable'],
    ['a statement timeout', pgError('57014'), 'DatabaseUnavailable'],
    ['a provider 503', new ProviderApiError('provider answered 503', 503), 'ProviderUnavailable'],
    ['a provider 429', new ProviderApiError('provider answered 429', 429), 'ProviderUnavailable'],
    ['an unreachable provider', new ProviderApiError('provider unreachable', null), 'ProviderUnavailable'],
    ['an error nobody named', new Error('something odd'), 'UnclassifiedError'],
  ])('R4 retryable: %s', (_name, error, type) => {
    expect(classifyError(error)).toMatchObject({ retryable: true, type });
  });

  it.each([
    ['numeric overflow', pgError('22003', { table_name: 'reconciliations', column_name: 'amount_minor' }), 'InvalidData'],
    ['invalid text (U+0000)', pgError('22021'), 'InvalidData'],
    ['invalid text representation', pgError('22P02'), 'InvalidData'],
    ['a unique violation', pgError('23505', { constraint_name: 'x_uq' }), 'ConstraintViolation'],
    ['a check violation', pgError('23514'), 'ConstraintViolation'],
    ['a trigger refusing (append-only)', pgError('P0001'), 'DatabaseRefused'],
    ['an undefined column', pgError('42703'), 'DatabaseRefused'],
    ['a ledger validation error', new LedgerValidationError('amount 0 is not a positive integer of minor units'), 'LedgerValidationError'],
    ['a ledger conflict', new LedgerConflictError('k', 'ltx_1'), 'LedgerConflictError'],
    ['a missing signing secret', Object.assign(new Error('endpoint we_1 has no active signing secret'), { name: 'MissingSigningSecretError' }), 'MissingSigningSecretError'],
    ['a provider 400', new ProviderApiError('provider answered 400', 400), 'ProviderRefused'],
    ['BigInt of garbage', (() => { try { BigInt('12x'); } catch (e) { return e; } })(), 'ProgrammingError'],
    ['an invalid date', (() => { try { new Date('x').toISOString(); } catch (e) { return e; } })(), 'ProgrammingError'],
    ['a thrown string', 'boom', 'ProgrammingError'],
  ])('R4 not retryable: %s', (_name, error, type) => {
    const classified = classifyError(error);
    expect(classified).toMatchObject({ retryable: false, type });
    expect(NON_RETRYABLE_ERROR_TYPES).toContain(classified.type);
  });

  it('R4 a database error is described by SQLSTATE and names, never by its parameters or server text', () => {
    const { message } = classifyError(pgError('22003', { table_name: 'reconciliations', column_name: 'amount_minor' }));
    expect(message).toBe('PostgreSQL 22003 numeric_value_out_of_range (table reconciliations, column amount_minor)');
    for (const error of [pgError('23505'), pgError('40001'), Object.assign(new Error('Failed query: select $1\nparams: secret-value'), { name: 'DrizzleQueryError' })]) {
      expect(classifyError(error).message).not.toMatch(/secret-value|4111|params/);
    }
  });
});

describe('R4 toActivityFailure and withClassifiedErrors', () => {
  it('R4 a deterministic error becomes a non-retryable ApplicationFailure of its type', () => {
    const failure = toActivityFailure(pgError('22021'), 1);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'InvalidData', nonRetryable: true, message: 'PostgreSQL 22021 character_not_in_repertoire' });
  });

  it('R4 infrastructure stays retryable on every attempt; an unnamed error only up to a bound', () => {
    expect(toActivityFailure(syscall('ECONNREFUSED'), 1000)).toMatchObject({ type: 'NetworkError', nonRetryable: false });
    expect(toActivityFailure(new Error('odd'), UNCLASSIFIED_MAX_ATTEMPTS - 1)).toMatchObject({ type: 'UnclassifiedError', nonRetryable: false });
    const last = toActivityFailure(new Error('odd'), UNCLASSIFIED_MAX_ATTEMPTS);
    expect(last).toMatchObject({ type: 'UnclassifiedError', nonRetryable: true });
    expect(last.message).toMatch(/gave up after 10 attempts: odd/);
  });

  it('R4 Temporal failures pass through unchanged', () => {
    const decided = ApplicationFailure.nonRetryable('x', 'DeliveryNotFoundError');
    expect(toActivityFailure(decided, 1)).toBe(decided);
    const cancelled = new CancelledFailure('cancelled');
    expect(toActivityFailure(cancelled, 1)).toBe(cancelled);
  });

  it('R4 the wrapper keeps results and classifies what an activity throws', async () => {
    const activities = withClassifiedErrors({
      ok: async (n: number) => n + 1,
      bad: async () => {
        throw new LedgerValidationError('amount 0 is not a positive integer of minor units');
      },
    });
    await expect(activities.ok(1)).resolves.toBe(2);
    await expect(activities.bad()).rejects.toMatchObject({ type: 'LedgerValidationError', nonRetryable: true });
  });
});

describe('R4 the proxies’ nonRetryableErrorTypes', () => {
  it('R4 list no retryable type, so an unnamed error really is retried up to its bound', () => {
    for (const type of ['UnclassifiedError', 'NetworkError', 'DatabaseUnavailable', 'Timeout', 'ProviderUnavailable']) {
      expect(NON_RETRYABLE_ERROR_TYPES).not.toContain(type);
    }
  });
});
