// M1: the outbox relay. A loop (run by the worker process) that claims unpublished outbox rows in batches
// (FOR UPDATE SKIP LOCKED, so replicas share the table), produces them to the outbound topic as ordinary envelopes,
// and marks them published only after Kafka acknowledged them, in the claim's transaction. A crash between the ack
// and the mark re-publishes the same envelopes (same evt_ ids) on the next claim: the dispatcher's dedupe (O3)
// makes that one event, so events are exactly once and deliveries stay at-least-once. Kafka or PostgreSQL down:
// the cycle fails, nothing is marked, the relay backs off (up to maxBackoffMs) and reconnects. R18: each message gets
// a producer span, child of its row's kept traceparent, and carries it in its `traceparent` header.
import type { Db } from '../db/client.js';
import { safeError } from '../db/errors.js';
import type { Producer } from '../kafka/types.js';
import type { Logger } from '../lib/logger.js';
import { outboxOldestAge, outboxPublished, outboxPublishFailures, outboxUnpublished } from '../metrics/outbox.js';
import { contextFrom, openSpan, SpanKind } from '../tracing/context.js';
import { outboxEnvelope, type LedgerAccount } from './envelope.js';
import { outboxBacklog, relayBatch, type OutboxRow, type RelayScope } from './store.js';

export interface RelayOptions {
  db: Db;
  logger: Logger;
  /** Connects a producer; called again after a failure (the old one is closed). */
  connect: () => Promise<Producer>;
  topic: string;
  accountOf: (provider: string) => LedgerAccount;
  batchSize?: number;
  /** Wait when the table is drained. */
  idleMs?: number;
  maxBackoffMs?: number;
  /** How often the lag gauges are refreshed. */
  gaugeIntervalMs?: number;
  /** Only these rows (a test's own, on a database other tests share); absent: every row. */
  scope?: RelayScope;
  /** Test seam: runs after Kafka acknowledged a batch and before its rows are marked (the crash window). */
  afterPublish?: (rows: OutboxRow[]) => Promise<void>;
}

export interface Relay {
  stop(): Promise<void>;
}

export function startOutboxRelay(options: RelayOptions): Relay {
  const { db, logger } = options;
  const batchSize = options.batchSize ?? 100;
  const idleMs = options.idleMs ?? 200;
  const maxBackoffMs = options.maxBackoffMs ?? 30_000;
  const gaugeIntervalMs = options.gaugeIntervalMs ?? 5_000;
  let running = true;
  let producer: Producer | undefined;
  let wake: (() => void) | undefined;
  let gaugesAt = 0;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  async function publish(rows: OutboxRow[]): Promise<void> {
    const spans = rows.map((row) =>
      openSpan(`${options.topic} publish`, {
        kind: SpanKind.PRODUCER,
        parent: contextFrom(row.traceparent),
        attributes: {
          'messaging.system': 'kafka',
          'messaging.operation.type': 'send',
          'messaging.destination.name': options.topic,
          'apipay.event_id': row.eventPublicId,
          'apipay.event_type': row.type,
        },
      }),
    );
    const messages = rows.map((row, i) => {
      const { key, envelope } = outboxEnvelope(row, options.accountOf);
      return { key, value: JSON.stringify(envelope), headers: spans[i]!.headers };
    });
    try {
      await producer!.send(options.topic, messages); // resolves once the broker acknowledged (acks = all)
    } catch (error) {
      for (const span of spans) span.end(error);
      throw error;
    }
    for (const span of spans) span.end();
    if (options.afterPublish) await options.afterPublish(rows);
  }

  /** Also while Kafka is down (that is when the lag grows); a database outage leaves the last values. */
  async function refreshGauges(): Promise<void> {
    if (Date.now() - gaugesAt < gaugeIntervalMs) return;
    gaugesAt = Date.now();
    try {
      const backlog = await outboxBacklog(db);
      outboxUnpublished.set(backlog.unpublished);
      outboxOldestAge.set(backlog.oldestSeconds);
    } catch {
      // PostgreSQL unreachable: the relay cycle reports it.
    }
  }

  const loop = (async () => {
    let failures = 0;
    while (running) {
      try {
        producer ??= await options.connect(); // before the claim: no transaction waits on a Kafka connect
        const published = await relayBatch(db, batchSize, publish, options.scope);
        if (published > 0) outboxPublished.inc(published);
        if (failures > 0) logger.info({ after: failures }, 'outbox relay publishing again');
        failures = 0;
        await refreshGauges();
        if (published < batchSize) await sleep(idleMs);
      } catch (error) {
        failures += 1;
        outboxPublishFailures.inc();
        const closing = producer;
        producer = undefined;
        await closing?.close().catch(() => {});
        const backoff = Math.min(maxBackoffMs, 250 * 2 ** Math.min(failures, 10));
        // One line per failure streak step, never the rows: bodies stay out of the log.
        if (failures === 1 || failures % 10 === 0)
          logger.warn({ err: safeError(error), failures, backoffMs: backoff }, 'outbox relay cycle failed; retrying');
        await refreshGauges();
        await sleep(backoff);
      }
    }
  })();

  return {
    async stop() {
      running = false;
      wake?.();
      await loop;
      await producer?.close().catch(() => {});
    },
  };
}
