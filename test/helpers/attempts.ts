// O7, O12, M11 (issue 31): a delivery's first attempt as the batched dispatcher makes it, for the tests that run one
// delivery through both modes (its hand-off goes to a queue no worker polls), and the attempt rows read back in order.
import type { Client } from '@temporalio/client';
import { eq } from 'drizzle-orm';
import type { Profile } from '../../src/config/profile.js';
import type { Db } from '../../src/db/client.js';
import { deliveryAttempts } from '../../src/db/schema/index.js';
import { createFirstAttempts } from '../../src/outbound/first-attempts.js';
import type { Logger } from '../../src/lib/logger.js';
import { TEST_SECRETS_KEY } from './env.js';

/** A delivery's attempt rows, attempt 1 first. */
export const attemptsOf = (db: Db, deliveryId: string) =>
  db.select().from(deliveryAttempts).where(eq(deliveryAttempts.deliveryId, deliveryId)).orderBy(deliveryAttempts.attemptNumber);

export interface BatchedDeps {
  db: Db;
  temporal: Client;
  profile: Profile;
  logger: Logger;
  /** Where a delivery that needs a workflow is handed off: a queue nobody polls, so no retry happens behind the test. */
  handOffQueue: string;
}

/** What the fan-out hands the dispatcher for one PENDING delivery of an enabled endpoint (its `handoff_since` set). */
export interface OwnedDelivery {
  deliveryId: string;
  endpointId: string;
  merchantAccount: string;
  body: Buffer;
  url: string;
}

/**
 * Attempt 1 of `delivery` through the batched dispatcher's first attempts (src/outbound/first-attempts.ts), resolved
 * once it is recorded: a POST past outbound.batched.patience (P13) is recorded after run() returns, so this drains.
 */
export async function batchedFirstAttempt(deps: BatchedDeps, delivery: OwnedDelivery) {
  const { db, profile, logger } = deps;
  const start = { temporal: deps.temporal, taskQueue: deps.handOffQueue, profile };
  const { deliveryId, endpointId, merchantAccount, body, url } = delivery;
  const handoff = {
    status: 'PENDING' as const,
    attemptCount: 0,
    nextAttemptAt: null,
    body,
    url,
    endpointStatus: 'enabled' as const,
  };
  const sender = createFirstAttempts({ db, profile, logger, secretsKey: TEST_SECRETS_KEY, start });
  const result = await sender.run([
    { deliveryId, endpointId, merchantAccount, eventType: 'payment.succeeded', traceparent: null, handoff },
  ]);
  const later = await sender.drain();
  return { delivered: result.delivered + later.delivered, handedOff: result.handedOff + later.handedOff };
}
