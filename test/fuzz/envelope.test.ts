// R10 over Kafka envelopes: whatever a message holds, the dispatcher's handler (real PostgreSQL) resolves — so the
// consumer commits and the partition moves on — and every message ends as an event row or a quarantine row.
import { randomUUID } from 'node:crypto';
import { and, eq, inArray } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { events, quarantinedMessages } from '../../src/db/schema/index.js';
import { parseEnvelope } from '../../src/outbound/envelope.js';
import { createOutboundBatchHandler } from '../../src/dispatcher/outbound-handler.js';
import type { RawMessage } from '../../src/kafka/types.js';
import { TEST_DATABASE_URL } from '../helpers/env.js';
import { envelope, uniqueMerchant } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import { connectDevServer, testLogger, uniqueTaskQueues } from '../helpers/temporal.js';
import { hostileJson, hostileString, runs, splicedString, timeoutFor } from './fuzz.js';

let database: Database;
let temporal: Awaited<ReturnType<typeof connectDevServer>>;
beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 4 });
  temporal = await connectDevServer();
});
afterAll(async () => {
  await temporal?.close();
  await database?.close();
});

const FIELDS = ['id', 'object', 'type', 'created', 'livemode', 'data', 'merchant_account', 'account'] as const;

/** A valid envelope with one field replaced by anything (or removed). */
const mutatedEnvelope = fc
  .record({ field: fc.constantFrom(...FIELDS), value: fc.oneof(hostileJson, hostileString, fc.constant(undefined)) })
  .map(({ field, value }) => {
    const base: Record<string, unknown> = envelope({ merchantAccount: uniqueMerchant('fuzz') });
    if (value === undefined) delete base[field];
    else base[field] = value;
    return JSON.stringify(base);
  });

/** A valid envelope whose stored string fields carry a character PostgreSQL may refuse. */
const splicedEnvelope = fc
  .record({ field: fc.constantFrom('merchant_account', 'account', 'type', 'id'), value: splicedString })
  .map(({ field, value }) => JSON.stringify({ ...envelope({ merchantAccount: uniqueMerchant('fuzz') }), [field]: value }));

const messageValue = fc.oneof(
  { weight: 4, arbitrary: mutatedEnvelope },
  { weight: 3, arbitrary: splicedEnvelope },
  { weight: 1, arbitrary: hostileJson.map((v) => JSON.stringify(v) ?? '') },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }) },
  { weight: 1, arbitrary: fc.constant(null) },
);
/** Strings stay strings in a counterexample (readable); the message carries their UTF-8 bytes. */
const bytes = (value: string | Uint8Array | null) => (value === null ? null : Buffer.from(value));

describe('R10 Kafka envelopes', () => {
  it('R10 parseEnvelope never throws: any bytes become an event or a named reason', () => {
    fc.assert(
      fc.property(messageValue, (value) => {
        const parsed = parseEnvelope(bytes(value));
        if (!parsed.ok) expect(parsed.reason).toMatch(/^[a-z0-9_]+$/);
      }),
      runs(500),
    );
  });

  it('R10 the batch handler always resolves; each message is stored as an event or quarantined with a reason', { timeout: timeoutFor(40, 500) }, async () => {
    const topic = `apipay.fuzz.${randomUUID().slice(0, 8)}`;
    const handler = createOutboundBatchHandler({ db: database.db, temporal: temporal.client, taskQueue: uniqueTaskQueues('fuzz').delivery, profile: testProfile(), logger: testLogger });
    let offset = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(messageValue, { minLength: 1, maxLength: 5 }), async (values) => {
        const good = Buffer.from(JSON.stringify(envelope({ merchantAccount: uniqueMerchant('fuzz') })));
        const messages: RawMessage[] = [...values.map(bytes), good].map((value) => ({
          topic, partition: 0, offset: String(offset++), key: null, value, timestamp: String(Date.now()), headers: {},
        }));
        await handler({ topic, partition: 0, messages, lag: 0 }); // a rejection here is a stuck partition
        const offsets = messages.map((m) => m.offset);
        const quarantined = await database.db.select().from(quarantinedMessages)
          .where(and(eq(quarantinedMessages.topic, topic), inArray(quarantinedMessages.offset, offsets)));
        const quarantinedAt = new Map(quarantined.map((q) => [q.offset, q.reason]));
        for (const message of messages) {
          const parsed = parseEnvelope(message.value);
          if (!parsed.ok) {
            expect(quarantinedAt.get(message.offset), `offset ${message.offset}`).toBeTruthy();
            continue;
          }
          if (quarantinedAt.has(message.offset)) continue; // refused by a later check (the handler's own reason)
          const stored = await database.db.select({ id: events.eventPublicId }).from(events).where(eq(events.eventPublicId, parsed.event.eventPublicId));
          expect(stored, `event ${parsed.event.eventPublicId} at offset ${message.offset}`).toHaveLength(1);
        }
      }),
      runs(40),
    );
  });
});
