// Runs a batch handler over a consumer with the consumer-lag metric; the entry point and the smoke test share it.
import { Gauge } from 'prom-client';
import type { BatchConsumer, BatchHandler } from '../kafka/types.js';
import { registry } from '../metrics/registry.js';

export const consumerLag = new Gauge({
  name: 'apipay_dispatcher_consumer_lag',
  help: 'Messages behind the partition high watermark when the last batch was fetched',
  labelNames: ['topic', 'partition'],
  registers: [registry],
});

export function runDispatcher(consumer: BatchConsumer, handler: BatchHandler): Promise<void> {
  return consumer.run(async (batch) => {
    await handler(batch);
    consumerLag.set({ topic: batch.topic, partition: String(batch.partition) }, batch.lag);
  });
}
