// What an attempt sends and how (O7, O8, O9, O15, O16): the stored bytes signed with the endpoint's active secrets
// in the endpoint's scheme (read at each attempt, so a switch applies from the next one), the URL vetted again at
// send time, one POST to the vetted addresses. The merchant's answer is a value, never thrown. R18: each POST is a
// client span (child of the active one: the attempt's activity, or the batched dispatcher's message); our trace
// context is not sent to the merchant.
import type { Db } from '../db/client.js';
import { exchange } from './exchange.js';
import { unsent, type AttemptOutcome } from './attempt-record.js';
import type { SecretKeys } from '../shared/keyring.js';
import { openSpan, SpanKind, type Context } from '../tracing/context.js';
import { createBrokerSender } from './destinations/publish.js';
import { isBrokerLocator } from './destinations/index.js';
import type { PinnedAgents } from './pinned-agents.js';
import { signingMaterialFor, signatureHeaders, type SignedHeaders } from './signature-headers.js';
import { signingMaterialsFor } from './signing-materials.js';
import { UnsafeUrlError, vetEndpointUrl, type LookupAll, type VettedAddress } from './url-safety.js';

/** R4: nothing to sign with; deterministic until an operator adds or rotates a secret, so never retried. */
export class MissingSigningSecretError extends Error {
  override name = 'MissingSigningSecretError';
}

export interface SenderDeps {
  db: Db;
  /** The master keys that decrypt endpoint secrets (A8). */
  secretsKey: SecretKeys;
  agents: PinnedAgents;
  /** Profile outbound.request_timeout: status line, headers and excerpt. */
  timeoutMs: number;
  excerptBytes: number;
  allowInsecureUrls: boolean;
  /** Resolver for the send-time URL check (O15); default the system resolver. */
  lookup?: LookupAll;
}

/** Where an attempt goes: the endpoint's url (an HTTP URL, or a broker destination's locator, M11) and its id. */
export interface SendTarget {
  endpointId: string;
  url: string;
}

export function createSender(deps: SenderDeps) {
  const publish = createBrokerSender({
    db: deps.db,
    secretsKey: deps.secretsKey,
    timeoutMs: deps.timeoutMs,
    allowInsecureUrls: deps.allowInsecureUrls,
    ...(deps.lookup ? { lookup: deps.lookup } : {}),
  });
  const sender = {
    /** The signature headers for `body` at `at`; throws MissingSigningSecretError without an active secret. */
    async sign(endpointId: string, body: Buffer, at: Date): Promise<SignedHeaders> {
      return (await this.signer(endpointId, at))(body);
    },

    /** One secrets lookup for many bodies signed at `at` (P1: a batch's first attempts to one endpoint). */
    async signer(endpointId: string, at: Date): Promise<(body: Buffer) => SignedHeaders> {
      const material = await signingMaterialFor(deps.db, endpointId, deps.secretsKey, at);
      if (material.secrets.length === 0)
        throw new MissingSigningSecretError(`endpoint ${endpointId} has no active signing secret`);
      const timestamp = Math.floor(at.getTime() / 1000);
      return (body) => signatureHeaders(material, body, timestamp);
    },

    /**
     * P14: the signers of many endpoints from one query (./signing-materials.ts), for a chunk of batched first
     * attempts; per endpoint as `signer`, its failure (no active secret, a secret that does not open) as the value.
     */
    async signers(endpointIds: string[], at: Date): Promise<Map<string, ((body: Buffer) => SignedHeaders) | Error>> {
      const timestamp = Math.floor(at.getTime() / 1000);
      const materials = await signingMaterialsFor(deps.db, endpointIds, deps.secretsKey, at);
      return new Map(
        [...materials].map(([endpointId, material]) => [
          endpointId,
          material instanceof Error
            ? material
            : material.secrets.length === 0
              ? new MissingSigningSecretError(`endpoint ${endpointId} has no active signing secret`)
              : (body: Buffer) => signatureHeaders(material, body, timestamp),
        ]),
      );
    },

    /**
     * O15: checked again at send time, since DNS may now point somewhere it did not at registration. M11: a broker
     * destination publishes instead of POSTing (src/outbound/destinations/publish.ts), with the same headers.
     */
    async send(target: SendTarget, body: Buffer, signature: SignedHeaders, parent?: Context): Promise<AttemptOutcome> {
      const { url } = target;
      const broker = isBrokerLocator(url);
      const span = openSpan(broker ? 'publish' : 'POST', {
        kind: broker ? SpanKind.PRODUCER : SpanKind.CLIENT,
        ...(parent ? { parent } : {}),
        attributes: broker
          ? {
              'messaging.system': url.startsWith('kafka') ? 'kafka' : 'rabbitmq',
              'server.address': safeHost(url),
              'apipay.delivery': 'merchant',
            }
          : { 'http.request.method': 'POST', 'server.address': safeHost(url), 'apipay.delivery': 'merchant' },
      });
      try {
        const outcome = broker ? await publish(target.endpointId, body, signature) : await post(url, body, signature);
        if (outcome.responseStatus !== null) span.span.setAttribute('http.response.status_code', outcome.responseStatus);
        if (outcome.errorKind) span.span.setAttribute('error.type', outcome.errorKind);
        span.end();
        return outcome;
      } catch (error) {
        span.end(error);
        throw error;
      }
    },
  };

  async function post(url: string, body: Buffer, signature: SignedHeaders): Promise<AttemptOutcome> {
    let addresses: VettedAddress[] | null;
    try {
      addresses = await vetEndpointUrl(url, { allowInsecure: deps.allowInsecureUrls, lookup: deps.lookup });
    } catch (error) {
      if (!(error instanceof UnsafeUrlError)) throw error;
      return unsent('unsafe_url', error.message);
    }
    return exchange(
      {
        url,
        body,
        // Connect to the addresses just vetted, not to whatever a second DNS answer says.
        dispatcher: deps.agents.dispatcherFor(url, addresses),
        headers: { 'content-type': 'application/json', 'user-agent': 'ApiPay-Webhooks/1.0', ...signature },
      },
      { timeoutMs: deps.timeoutMs, excerptBytes: deps.excerptBytes },
    );
  }
  return sender;
}

/** The host of an endpoint URL (never its path or query, which may carry a merchant's token). */
function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'invalid';
  }
}

export type Sender = ReturnType<typeof createSender>;
