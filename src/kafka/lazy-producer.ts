// A producer that connects on its first send and again after a failed one (R5: the API process starts and serves
// without Kafka; only the routes that publish, e.g. M7's `POST /events/trigger`, need it).
import { createProducer } from './kafkajs.js';
import type { KafkaSettings, Producer } from './types.js';

export function lazyProducer(
  settings: KafkaSettings,
  connect: (s: KafkaSettings) => Promise<Producer> = createProducer,
): Producer {
  let connecting: Promise<Producer> | undefined;
  const producer = () => {
    connecting ??= connect(settings).catch((error: unknown) => {
      connecting = undefined; // not cached: the next send tries again
      throw error;
    });
    return connecting;
  };
  return {
    async send(topic, messages) {
      await (await producer()).send(topic, messages);
    },
    async close() {
      const open = connecting;
      connecting = undefined;
      if (open) await (await open.catch(() => undefined))?.close();
    },
  };
}
