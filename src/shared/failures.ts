// R4, the workflow side of error classification (deterministic, no I/O: workflows import it). The activity side,
// which decides what is retryable, is src/lib/errors.ts.
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';

/** Our own errors, thrown under their own name: deterministic, so never retried (src/lib/errors.ts keeps them). */
export const DOMAIN_ERROR_NAMES = [
  'LedgerConflictError',
  'ReversalExceedsSettledError',
  'LedgerValidationError',
  'DeliveryNotFoundError',
  'MissingSigningSecretError',
  'SecretDecryptionError',
  'ProviderNotConfiguredError',
  'IllegalTransitionError',
  'EventExpungedError',
] as const;

/** The types src/lib/errors.ts gives any other deterministic error. */
const CLASSIFIED_NON_RETRYABLE_TYPES = ['InvalidData', 'ConstraintViolation', 'DatabaseRefused', 'ProgrammingError', 'ProviderRefused'] as const;

/** The types src/lib/errors.ts gives an error that heals by itself (retried). */
export const CLASSIFIED_RETRYABLE_TYPES = ['DatabaseUnavailable', 'NetworkError', 'Timeout', 'ProviderUnavailable', 'UnclassifiedError'] as const;

/**
 * Type names of deterministic failures: activities throw them as ApplicationFailure.nonRetryable, and every
 * activity proxy lists them too, so a plain Error of one of these names is never retried either. Not listed:
 * UnclassifiedError, which is retried a bounded number of times before it is thrown as non-retryable.
 */
export const NON_RETRYABLE_ERROR_TYPES = [...DOMAIN_ERROR_NAMES, ...CLASSIFIED_NON_RETRYABLE_TYPES] as const;

/** Every ApplicationFailure type an activity's classified error can carry. */
export type ClassifiedFailureType =
  | (typeof NON_RETRYABLE_ERROR_TYPES)[number]
  | (typeof CLASSIFIED_RETRYABLE_TYPES)[number];

/**
 * A final failure of an activity (non-retryable, or retries exhausted): an ActivityFailure, or for a local activity
 * the ApplicationFailure itself, which is how the SDK reports those.
 */
export function isActivityFailure(error: unknown): error is ActivityFailure | ApplicationFailure {
  return error instanceof ActivityFailure || error instanceof ApplicationFailure;
}

const cause = (error: unknown) => (error instanceof ActivityFailure ? error.cause : error);

/** The failure type an activity reported (its error name), if any. */
export function failureType(error: unknown): string | undefined {
  const c = cause(error);
  return c instanceof ApplicationFailure ? (c.type ?? undefined) : undefined;
}

/** The activity's own message (not Temporal's "Activity task failed" wrapper). */
export function failureText(error: unknown): string {
  return ((cause(error) ?? error) as Error).message;
}

/** An operator-facing reason for a failed activity: `<Type>: <message>`, bounded, single line. */
export function failureReason(error: unknown): string {
  const type = failureType(error);
  const text = failureText(error).replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  const reason = type && !text.startsWith(type) ? `${type}: ${text}` : text;
  return reason.length > 500 ? `${reason.slice(0, 497)}...` : reason;
}
