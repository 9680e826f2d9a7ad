// M11: the webhook_endpoints values of a broker destination: validated against its description, its url the
// destination's locator, its secret fields sealed (./credentials.ts) under the endpoint's id. An update merges the
// given fields into what the endpoint has (a secret left out is kept) and validates the whole again.
import type { webhookEndpoints } from '../../db/schema/index.js';
import type { SecretKeys } from '../../shared/keyring.js';
import type { DestinationType } from '../../shared/outbound.js';
import { openCredentials, sealCredentials } from './credentials.js';
import { DestinationInvalidError, locatorOf, validateDestination } from './index.js';

type Endpoint = typeof webhookEndpoints.$inferSelect;

/** A broker destination's fields as given (text), validated against its description. */
export interface DestinationInput {
  type: Exclude<DestinationType, 'http'>;
  fields: Record<string, unknown>;
}

/** M11: the url, type, settings and sealed credentials of a new endpoint (http: its URL only). */
export function destinationValues(
  id: string,
  input: { url?: string; destination?: DestinationInput },
  secretsKey: SecretKeys,
): Partial<typeof webhookEndpoints.$inferInsert> & { url: string } {
  if (!input.destination) {
    if (input.url === undefined) throw new Error('an http endpoint needs a url');
    return { url: input.url };
  }
  const { config, credentials } = validateDestination(input.destination.type, input.destination.fields);
  const sealed = Object.keys(credentials).length ? sealCredentials(id, credentials, secretsKey) : null;
  return {
    url: locatorOf(input.destination.type, config),
    destinationType: input.destination.type,
    destinationConfig: config,
    destinationCredentials: sealed?.ciphertext ?? null,
    destinationCredentialsKeyId: sealed?.keyId ?? null,
  };
}

/** M11: given fields replace the endpoint's, the rest (a secret included) stay; validated as a whole again. */
export function changedDestination(
  endpoint: Endpoint,
  fields: Record<string, unknown>,
  secretsKey: SecretKeys,
): Partial<typeof webhookEndpoints.$inferInsert> {
  const type = endpoint.destinationType;
  if (type === 'http')
    throw new DestinationInvalidError([
      { field: 'destination', message: 'an http endpoint has no destination fields; change its url' },
    ]);
  const existing = {
    config: endpoint.destinationConfig ?? {},
    credentials: openCredentials(
      endpoint.id,
      { ciphertext: endpoint.destinationCredentials, keyId: endpoint.destinationCredentialsKeyId },
      secretsKey,
    ),
  };
  const { config, credentials } = validateDestination(type, fields, existing);
  const sealed = Object.keys(credentials).length ? sealCredentials(endpoint.id, credentials, secretsKey) : null;
  return {
    url: locatorOf(type, config),
    destinationConfig: config,
    destinationCredentials: sealed?.ciphertext ?? null,
    destinationCredentialsKeyId: sealed?.keyId ?? null,
  };
}
