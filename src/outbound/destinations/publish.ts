// M11: an attempt to a broker destination, from the shared attempt path (src/outbound/sender.ts sends every endpoint
// whose url is a broker locator here): the endpoint's destination read at each attempt (a change applies to the next
// one), its credentials opened, one publish on a pooled connection within outbound.request_timeout, and the result
// as an attempt outcome (./outcome.ts) — a broker that is down or refuses is a failed attempt like an HTTP 5xx, with
// the same retries, never a lost event. The process's connections (`brokerConnections`) close at shutdown.
import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { webhookEndpoints } from '../../db/schema/index.js';
import type { SecretKeys } from '../../shared/keyring.js';
import type { AttemptOutcome } from '../attempt-record.js';
import { eventIdOf, type SignedHeaders } from '../signature-headers.js';
import { brokerSocketGuard, type LookupAll } from '../url-safety.js';
import { openCredentials } from './credentials.js';
import { openKafka, type KafkaConnection } from './kafka-publisher.js';
import { brokerFailure, published } from './outcome.js';
import { createConnectionPool, poolKey, type ConnectionPool } from './pool.js';
import { openRabbit, type RabbitConnection } from './rabbitmq-publisher.js';

type Connection = RabbitConnection | KafkaConnection;

/** The worker's and dispatcher's broker connections, at most 64 destinations open at once; closed at shutdown. */
export const brokerConnections: ConnectionPool<Connection> = createConnectionPool<Connection>({ max: 64 });

export interface BrokerSenderDeps {
  db: Db;
  secretsKey: SecretKeys;
  timeoutMs: number;
  allowInsecureUrls: boolean;
  lookup?: LookupAll;
  connections?: ConnectionPool<Connection>;
}

export function createBrokerSender(deps: BrokerSenderDeps) {
  const pool = deps.connections ?? brokerConnections;
  const guard = brokerSocketGuard({ allowInsecure: deps.allowInsecureUrls, ...(deps.lookup ? { lookup: deps.lookup } : {}) });

  return async function publish(endpointId: string, body: Buffer, signature: SignedHeaders): Promise<AttemptOutcome> {
    const [row] = await deps.db
      .select({
        type: webhookEndpoints.destinationType,
        config: webhookEndpoints.destinationConfig,
        ciphertext: webhookEndpoints.destinationCredentials,
        keyId: webhookEndpoints.destinationCredentialsKeyId,
      })
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.id, endpointId));
    if (!row || row.type === 'http' || !row.config) throw new Error(`endpoint ${endpointId} has no broker destination`);
    const config = row.config;
    const credentials = openCredentials(endpointId, row, deps.secretsKey); // SecretDecryptionError: R4, not retried
    const secrets = Object.values(credentials);
    const key = poolKey(endpointId, config, credentials);
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let connection: Connection | undefined;
    try {
      connection = await pool.get(key, () =>
        row.type === 'rabbitmq'
          ? openRabbit(config, credentials, guard, deps.timeoutMs)
          : openKafka(config, credentials, guard, deps.timeoutMs),
      );
      const left = Math.max(1, deps.timeoutMs - elapsed());
      await connection.publish(body, signature, eventIdOf(body), left);
      return published(elapsed(), row.type === 'rabbitmq' ? 'confirmed by the broker' : 'acknowledged by all in-sync replicas');
    } catch (error) {
      // A connection whose publish failed or timed out is in an unknown state: the next attempt opens a fresh one.
      if (connection) await pool.drop(key);
      return brokerFailure(error, elapsed(), secrets);
    }
  };
}
