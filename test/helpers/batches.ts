// P1/P13/P23/P24 tests: events fanned out through the real outbound batch handler (src/dispatcher/outbound-handler.ts)
// as one Kafka batch, without a broker: the handler, its messages, and a batch handled and drained.
import type { Client } from '@temporalio/client';
import type { Profile } from '../../src/config/profile.js';
import type { Db } from '../../src/db/client.js';
import { createOutboundBatchHandler, type OutboundBatchHandler } from '../../src/dispatcher/outbound-handler.js';
import { TEST_SECRETS_KEY } from './env.js';
import { envelope } from './outbound.js';
import { testLogger } from './temporal.js';

export function testBatchHandler(deps: { db: Db; temporal: Client; taskQueue: string; profile: Profile }): OutboundBatchHandler {
  return createOutboundBatchHandler({ ...deps, logger: testLogger, secretsKey: TEST_SECRETS_KEY });
}

/** Hands `count` new events of the merchant to `handler` as one batch of `topic`; resolves to their ids. */
export async function handleBatch(
  handler: OutboundBatchHandler,
  topic: string,
  merchantAccount: string,
  count: number,
): Promise<string[]> {
  const events = Array.from({ length: count }, () => envelope({ merchantAccount }));
  const messages = events.map((e, i) => ({
    topic,
    partition: 0,
    offset: String(i),
    key: null,
    value: Buffer.from(JSON.stringify(e)),
    timestamp: '0',
    headers: {},
  }));
  await handler({ topic, partition: 0, lag: 0, messages });
  return events.map((e) => e.id);
}

/** A batch handled by a new handler on the world's client, and drained (its sends, starts and probe starts done). */
export async function fanOutBatch(
  deps: { db: Db; temporal: Client; taskQueue: string; profile: Profile },
  topic: string,
  merchantAccount: string,
  count: number,
): Promise<string[]> {
  const handler = testBatchHandler(deps);
  const ids = await handleBatch(handler, topic, merchantAccount, count);
  await handler.drain();
  return ids;
}
