// Issue 22: the settings for an external Temporal (TLS; mTLS for Temporal Cloud) and Kafka (TLS, SASL) are parsed
// once (src/config/env.ts) and turned into the clients' options (src/config/connections.ts); halves of a pair are
// refused at start, naming the variable that is missing.
import { describe, expect, it } from 'vitest';
import { kafkaSecurity, temporalConnection } from '../../src/config/connections.js';
import { EnvError, parseEnv } from '../../src/config/env.js';

const base = { ADMIN_TOKEN: 'a'.repeat(16), SECRETS_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') };
const files: Record<string, string> = { '/tls/ca.pem': 'CA', '/tls/client.pem': 'CRT', '/tls/client.key': 'KEY' };
const read = (path: string) => Buffer.from(files[path] ?? `missing ${path}`);
/** The environment with `vars` beside the two the API always needs. */
const envWith = (vars: Record<string, string>) => parseEnv({ ...base, ...vars });

describe('external Temporal and Kafka settings', () => {
  it('the local stack: plain gRPC and plaintext Kafka, no options at all', () => {
    const env = parseEnv(base);
    expect(temporalConnection(env, read)).toEqual({});
    expect(kafkaSecurity(env)).toEqual({});
  });

  it('Temporal Cloud: TLS with the client certificate pair (mTLS), roots from the system', () => {
    const env = envWith({
      TEMPORAL_TLS: 'true',
      TEMPORAL_TLS_CERT_PATH: '/tls/client.pem',
      TEMPORAL_TLS_KEY_PATH: '/tls/client.key',
    });
    expect(temporalConnection(env, read)).toEqual({
      tls: { clientCertPair: { crt: Buffer.from('CRT'), key: Buffer.from('KEY') } },
    });
  });

  it('a self-hosted cluster: its CA and the name on its certificate', () => {
    const env = envWith({ TEMPORAL_TLS_CA_PATH: '/tls/ca.pem', TEMPORAL_TLS_SERVER_NAME: 'temporal.internal' });
    expect(temporalConnection(env, read)).toEqual({
      tls: { serverRootCACertificate: Buffer.from('CA'), serverNameOverride: 'temporal.internal' },
    });
  });

  it('Kafka with TLS and SCRAM', () => {
    const env = envWith({
      KAFKA_SSL: 'true',
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'u',
      KAFKA_SASL_PASSWORD: 'p',
    });
    expect(kafkaSecurity(env)).toEqual({ ssl: true, sasl: { mechanism: 'scram-sha-512', username: 'u', password: 'p' } });
  });

  it('half a certificate pair, SASL without credentials or a bad flag stop the start naming the variable', () => {
    const issues = (source: Record<string, string>) => {
      try {
        parseEnv({ ...base, ...source });
      } catch (error) {
        return (error as EnvError).issues.map((i) => i.variable);
      }
      return [];
    };
    expect(issues({ TEMPORAL_TLS_CERT_PATH: '/tls/client.pem' })).toEqual(['TEMPORAL_TLS_KEY_PATH']);
    expect(issues({ TEMPORAL_TLS_KEY_PATH: '/tls/client.key' })).toEqual(['TEMPORAL_TLS_CERT_PATH']);
    expect(issues({ KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'u' })).toEqual(['KAFKA_SASL_PASSWORD']);
    expect(issues({ KAFKA_SSL: 'yes' })).toEqual(['KAFKA_SSL']);
  });
});
