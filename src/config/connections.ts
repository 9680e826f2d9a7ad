// Issue 22: how the processes reach an external Temporal (TLS, mTLS for Temporal Cloud) and Kafka (TLS, SASL), from
// the variables src/config/env.ts parsed. PostgreSQL TLS needs nothing here: DATABASE_URL's own `sslmode`.
import { readFileSync } from 'node:fs';
import type { Env } from './env.js';

/** The `tls` option of @temporalio/client's Connection and @temporalio/worker's NativeConnection. */
export interface TemporalTls {
  serverRootCACertificate?: Buffer;
  clientCertPair?: { crt: Buffer; key: Buffer };
  serverNameOverride?: string;
}

type TemporalTlsEnv = Pick<
  Env,
  'TEMPORAL_TLS' | 'TEMPORAL_TLS_CA_PATH' | 'TEMPORAL_TLS_CERT_PATH' | 'TEMPORAL_TLS_KEY_PATH' | 'TEMPORAL_TLS_SERVER_NAME'
>;

/** `{ tls }` to spread into a Temporal connection's options, or `{}` for plain gRPC (the local stack). */
export function temporalConnection(env: TemporalTlsEnv, read: (path: string) => Buffer = readFileSync): { tls?: TemporalTls } {
  const any = env.TEMPORAL_TLS || env.TEMPORAL_TLS_CA_PATH || env.TEMPORAL_TLS_CERT_PATH || env.TEMPORAL_TLS_SERVER_NAME;
  if (!any) return {};
  return {
    tls: {
      ...(env.TEMPORAL_TLS_CA_PATH ? { serverRootCACertificate: read(env.TEMPORAL_TLS_CA_PATH) } : {}),
      ...(env.TEMPORAL_TLS_CERT_PATH && env.TEMPORAL_TLS_KEY_PATH
        ? { clientCertPair: { crt: read(env.TEMPORAL_TLS_CERT_PATH), key: read(env.TEMPORAL_TLS_KEY_PATH) } }
        : {}),
      ...(env.TEMPORAL_TLS_SERVER_NAME ? { serverNameOverride: env.TEMPORAL_TLS_SERVER_NAME } : {}),
    },
  };
}

export interface KafkaSecurity {
  ssl?: boolean;
  sasl?: { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; username: string; password: string };
}

/** `{ ssl, sasl }` to spread into the Kafka settings (src/kafka/types.ts), or `{}` for the local stack's plaintext. */
export function kafkaSecurity(
  env: Pick<Env, 'KAFKA_SSL' | 'KAFKA_SASL_MECHANISM' | 'KAFKA_SASL_USERNAME' | 'KAFKA_SASL_PASSWORD'>,
): KafkaSecurity {
  return {
    ...(env.KAFKA_SSL ? { ssl: true } : {}),
    ...(env.KAFKA_SASL_MECHANISM
      ? {
          sasl: {
            mechanism: env.KAFKA_SASL_MECHANISM,
            username: env.KAFKA_SASL_USERNAME ?? '',
            password: env.KAFKA_SASL_PASSWORD ?? '',
          },
        }
      : {}),
  };
}
