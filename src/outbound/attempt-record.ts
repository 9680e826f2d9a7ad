// R3: an attempt is recorded even when PostgreSQL refuses its details, and a write that fails altogether reports
// itself without the query's parameters (they hold the merchant's answer). The caller then throws, Temporal retries
// the activity, and the retry finds the attempt reserved in flight: it records `interrupted` and never POSTs again.

import type { ExchangeErrorKind } from './exchange.js';

export type AttemptErrorKind =
  | ExchangeErrorKind
  | 'unsafe_url'
  /** M11: a broker destination answered and refused (login, nack, unroutable, no such topic or exchange). */
  | 'broker_refused'
  | 'endpoint_disabled'
  /** The worker stopped while this attempt was in flight; the merchant may or may not have received it. */
  | 'interrupted';

/** What one attempt came to, as stored in its delivery_attempts row. */
export interface AttemptOutcome {
  succeeded: boolean;
  responseStatus: number | null;
  errorKind: AttemptErrorKind | null;
  errorMessage: string | null;
  excerpt: string | null;
  latencyMs: number;
  /** O18: what a 429/503's Retry-After asked for (ms); absent when it sent none. */
  retryAfterMs?: number | null;
}

/** An outcome without an answer from the merchant (nothing sent, or nothing known to have arrived). */
export const unsent = (errorKind: AttemptErrorKind, errorMessage: string): AttemptOutcome => ({
  succeeded: false,
  responseStatus: null,
  errorKind,
  errorMessage,
  excerpt: null,
  latencyMs: 0,
});

type Recordable = Pick<AttemptOutcome, 'responseStatus' | 'errorMessage' | 'excerpt'>;

/** The SQLSTATE of a database error (drizzle wraps the driver's error in `cause`), or 'unknown'. */
export function sqlState(error: unknown): string {
  for (let e = error as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return e.code;
  }
  return 'unknown';
}

/** The same outcome without what the merchant sent or a library said: only values of ours, always storable. */
export function withoutDetails<T extends Recordable>(outcome: T, error: unknown): T {
  const status = outcome.responseStatus === null ? '' : `HTTP ${outcome.responseStatus}; `;
  return { ...outcome, excerpt: null, errorMessage: `${status}the response details could not be stored (SQLSTATE ${sqlState(error)})` };
}

/** Retryable (infrastructure): the attempt row could not be written; its message carries no query parameters. */
export class AttemptNotRecordedError extends Error {
  override name = 'AttemptNotRecordedError';
  constructor(deliveryId: string, attemptNumber: number, error: unknown) {
    super(`attempt ${attemptNumber} of ${deliveryId} could not be recorded (SQLSTATE ${sqlState(error)}); a retry records it as interrupted`);
  }
}
