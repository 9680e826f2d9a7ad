// All activities, built once from their clients and config and registered by the worker. Every error they throw
// is classified (R4, src/lib/errors.ts): infrastructure is retried, a deterministic error is not.
import type { Db } from '../db/client.js';
import type { Profile } from '../config/profile.js';
import type { Logger } from '../lib/logger.js';
import { withClassifiedErrors } from '../lib/errors.js';
import type { SecretKeys } from '../shared/keyring.js';
import type { ReconciliationRules } from '../shared/inbound.js';
import { loadReconciliationRules } from '../inbound/load-rules.js';
import { createSmokeActivities } from './smoke.js';
import { createReconciliationActivities } from './reconciliation.js';
import { createReconciliationTrustActivities } from './reconciliation-trust.js';
import { createDeliveryTrustActivities } from './delivery-trust.js';
import { createResolutionActivities } from './resolution.js';
import { createDeliveryActivities } from './delivery.js';
import { createParkingActivities } from './parking.js';
import { createLedgerPositionActivities } from './ledger-position.js';
import { stepFault } from './step-fault.js';
import { createStepJournal } from './step-journal.js';

export interface ActivityDeps {
  db: Db;
  profile: Profile;
  logger: Logger;
  /** The master keys that decrypt endpoint secrets (SECRETS_ENCRYPTION_KEY…, A8); a bare 32-byte key is one key. */
  secretsKey: SecretKeys;
  /** Injectable fetch for the provider API (reconciliation; unit tests fake the peer). Merchant POSTs use undici directly. */
  fetch?: typeof fetch;
  /** R20: the reconciliation state machine this worker runs (default config/reconciliation-states.yaml; tests vary it). */
  rules?: ReconciliationRules;
  /** R13 test hook (APIPAY_FAULT_AFTER_STEP, src/activities/step-fault.ts): kill the process right after a step. */
  faultAfterStep?: string;
}

export function createActivities(deps: ActivityDeps) {
  // R13: the reconciliation's local steps answer a re-run of their workflow task from their first durable answer
  // (src/activities/step-journal.ts); the journal sees classified failures and its own errors are classified too.
  const journal = createStepJournal({ db: deps.db, logger: deps.logger, fault: stepFault(deps.faultAfterStep) });
  return withClassifiedErrors(
    journal.wrap(
      withClassifiedErrors({
        ...createSmokeActivities(deps),
        ...createReconciliationActivities(deps),
        ...createReconciliationTrustActivities({ ...deps, rules: deps.rules ?? loadReconciliationRules() }),
        ...createLedgerPositionActivities(deps),
        ...createResolutionActivities(deps),
        ...createDeliveryActivities(deps),
        ...createDeliveryTrustActivities(deps),
        ...createParkingActivities(deps),
      }),
    ),
  );
}

export type Activities = ReturnType<typeof createActivities>;
