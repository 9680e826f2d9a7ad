// M11: the `kafka` destination described once (./fields.ts): the merchant's own Kafka cluster and topic, produced to
// with acks=all by an idempotent producer, the event id as the key. SASL is optional; its password is secret.
import { z } from 'zod';
import { bool, hostPort, type DestinationDescription } from './fields.js';

const brokerList = z
  .string()
  .max(2000)
  .refine((v) => v.split(',').every((b) => hostPort.safeParse(b.trim()).success), 'must be host:port[,host:port…]');

export const kafkaDestination: DestinationDescription = {
  type: 'kafka',
  label: 'Kafka',
  help: 'Produce each event to a topic of your Kafka cluster (acks=all, idempotent producer, key = event id)',
  fields: [
    {
      name: 'brokers',
      label: 'Brokers',
      help: 'bootstrap brokers, host:port comma-separated',
      required: true,
      example: 'kafka-1.example.com:9092',
      check: brokerList,
    },
    {
      name: 'topic',
      label: 'Topic',
      help: 'the topic (it must exist)',
      required: true,
      example: 'apipay.events',
      check: z.string().regex(/^[A-Za-z0-9._-]{1,249}$/, 'must be a Kafka topic name'),
    },
    {
      name: 'sasl_mechanism',
      label: 'SASL mechanism',
      help: 'none, plain, scram-sha-256 or scram-sha-512',
      required: false,
      default: 'none',
      check: z.enum(['none', 'plain', 'scram-sha-256', 'scram-sha-512']),
    },
    {
      name: 'username',
      label: 'SASL username',
      help: 'the SASL user (with a mechanism)',
      required: false,
      check: z.string().min(1).max(255),
    },
    {
      name: 'password',
      label: 'SASL password',
      help: "the SASL user's password (with a mechanism)",
      required: false,
      secret: true,
      check: z.string().min(1).max(1024),
    },
    { name: 'tls', label: 'TLS', help: 'connect with TLS', required: false, default: 'false', check: bool },
  ],
  locator: (c) =>
    `kafka://${(c.brokers ?? '')
      .split(',')
      .map((b) => b.trim())
      .join(',')}/${c.topic}`,
};
