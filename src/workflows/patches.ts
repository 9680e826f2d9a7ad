// R12: every workflow patch id in one place (docs/workflow-versioning.md). `patched(id)` is true for executions that
// reach the change on the new code and false when a history recorded before it replays; once no open execution
// predates a patch, it becomes `deprecatePatch(id)` and then goes. The recorded histories that keep each old path
// replaying are named beside it.

/** R2: the operator's resolution in one activity (histories before: test/fixtures/histories/pre-r2/). */
export const ONE_TRANSACTION_RESOLUTION = 'resolution-one-transaction';
/** A4, A5: attributed resolutions and dual control; histories from before commit unattributed. */
export const RESOLUTION_ACCESS = 'resolution-access-dual-control';
/** L5: the ledger check after a payment-level answer (histories: test/fixtures/histories/pre-merge/). */
export const SETTLEMENT_DISCREPANCY = 'l5-settlement-discrepancy';
/** P3: reconciliation steps as local activities (histories before: test/fixtures/histories/pre-p3/). */
export const LOCAL_STEPS = 'p3-local-steps';
/** M2, M3, M5: the admission of an attempt (slow lane, ordering, throttle); only taken when an attempt is deferred. */
export const DELIVERY_ADMISSION = 'm2-m3-m5-admission';
/** O18: a longer wait asked by Retry-After; only taken when an attempt's result carries one. */
export const RETRY_AFTER = 'o18-retry-after';
/** A24: a signed request's id is spent when it arrives, refused or not; histories from before judge reuse as before. */
export const SPENT_ON_ARRIVAL = 'a24-request-spent-on-arrival';
/** R20: a reconciliation's first step checks its start against the receipt; rules and settings from the worker's profile. */
export const TRUST_THE_DATABASE = 'r20-trust-the-database';
/** R20: a separate patch, so a run that started before R20 still seals the `continued` block it carries to one that checks it. */
export const SEALED_CONTINUATION = 'r20-sealed-continuation';
/** R20: a delivery's start is checked against its row before any attempt; histories from before hold no check. */
export const DELIVERY_START_CHECK = 'r20-delivery-start-check';
/** P15: a scheduled retry may be parked by its endpoint's circuit (waits for the probe's release); histories from before never park. */
export const DELIVERY_PARKS = 'p15-retry-parks';
/** O12/P15: the retryNow that woke a parked retry is spent on its attempt; histories from before send the next at once too. */
export const PARKED_RETRY_ONCE = 'p15-parked-retry-once';
/** P20: a retry resumed by a run whose start delay was its wait attempts at once; histories from before took a 1 ms timer first. */
export const START_DELAYED_RETRY = 'p20-start-delayed-retry';
/** P22: a probe's pass is one activity (probePass) and its timer; histories from before (pre-p22/) take three activities. */
export const PROBE_ONE_PASS = 'p22-probe-one-pass';
