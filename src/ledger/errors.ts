// Named ledger failures. The first two are domain errors (non-retryable in the workflow's activity options);
// CaptureNotPostedError is a wait, not a failure: a refund that arrived before its capture.
export class LedgerConflictError extends Error {
  override name = 'LedgerConflictError';
  /** L3: names the posting in the way, and who made it (an operator's resolution or adjustment shows here). */
  constructor(readonly idempotencyKey: string, readonly existingTransactionId: string, readonly existingActor?: string) {
    super(`ledger idempotency key ${idempotencyKey} was already posted with other content (${existingTransactionId}${existingActor ? ` by ${existingActor}` : ''})`);
  }
}

export class ReversalExceedsSettledError extends Error {
  override name = 'ReversalExceedsSettledError';
  constructor(readonly idempotencyKey: string, readonly settledMinor: bigint, readonly requestedMinor: bigint) {
    super(`${idempotencyKey}: reversing ${requestedMinor} would exceed the ${settledMinor} still settled on the payment`);
  }
}

export class CaptureNotPostedError extends Error {
  override name = 'CaptureNotPostedError';
  constructor(readonly idempotencyKey: string) {
    super(`${idempotencyKey}: the payment's capture is not in the ledger yet`);
  }
}

export const LEDGER_NON_RETRYABLE = ['LedgerConflictError', 'ReversalExceedsSettledError', 'LedgerValidationError'];
