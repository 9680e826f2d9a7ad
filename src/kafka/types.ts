// Our small interface over the Kafka client, so kafkajs (in maintenance mode) can be swapped without touching
// the dispatcher: a batch of raw messages in, a promise that resolves when the batch may be committed.
export interface RawMessage {
  topic: string;
  partition: number;
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  timestamp: string;
  headers: Record<string, string>;
}

export interface MessageBatch {
  topic: string;
  partition: number;
  messages: RawMessage[];
  /** Offset lag of this partition when the batch was fetched (for the consumer-lag metric). */
  lag: number;
}

/** Handles one batch; offsets of the batch are committed only after it resolves (O5). */
export type BatchHandler = (batch: MessageBatch) => Promise<void>;

export interface BatchConsumer {
  run(handler: BatchHandler): Promise<void>;
  stop(): Promise<void>;
}

export interface Producer {
  send(topic: string, messages: { key?: string | Buffer | null; value: string | Buffer; headers?: Record<string, string> }[]): Promise<void>;
  close(): Promise<void>;
}

export interface KafkaSettings {
  brokers: string[];
  clientId: string;
  /** Issue 22: TLS and SASL to an external cluster (src/config/connections.ts kafkaSecurity); unset: plaintext. */
  ssl?: boolean;
  sasl?: { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; username: string; password: string };
}
