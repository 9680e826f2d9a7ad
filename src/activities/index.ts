// All activities, built once from their clients and config and registered by the worker. Every error they throw
// is classified (R4, src/lib/errors.ts): infrastructure is retried, a deterministic error is not.
import type { Db } from '../db/client.js';
import type { Profile } from '../config/profile.js';
import type { Logger } from '../lib/logger.js';
import { withClassifiedErrors } from '../lib/errors.js';
import type { SecretKeys } from '../shared/keyring.js';
import { createSmokeActivities } from './smoke.js';
import { createReconciliationActivities } from './reconciliation.js';
import { createResolutionActivities } from './resolution.js';
import { createDeliveryActivities } from './delivery.js';
import { createLedgerPositionActivities } from './ledger-position.js';

export interface ActivityDeps {
  db: Db;
  profile: Profile;
  logger: Logger;
  /** The master keys that decrypt endpoint secrets (SECRETS_ENCRYPTION_KEY…, A8); a bare 32-byte key is one key. */
  secretsKey: SecretKeys;
  /** Injectable fetch for outbound HTTP (unit tests fake the peer). */
  fetch?: typeof fetch;
}

export function createActivities(deps: ActivityDeps) {
  return withClassifiedErrors({
    ...createSmokeActivities(deps),
    ...createReconciliationActivities(deps),
    ...createLedgerPositionActivities(deps),
    ...createResolutionActivities(deps),
    ...createDeliveryActivities(deps),
  });
}

export type Activities = ReturnType<typeof createActivities>;
