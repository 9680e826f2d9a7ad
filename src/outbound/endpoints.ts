// Webhook endpoint service (requirements §4): create with a secret shown once, read, list, update, disable/enable, delete.
// M11: an endpoint is an http URL or a broker destination (rabbitmq, kafka) whose credentials are sealed here.
// Deletion is soft (deleted_at + disabled): deliveries keep referencing the endpoint, so their history stays
// queryable, no new delivery is fanned out to it and no attempt is sent; its secrets are destroyed.
// Every method takes the acting principal (A1): a merchant key sees its own account's endpoints only, so another
// account's endpoint is not found. Every change writes its audit row (A3) in the change's own transaction.
import { and, eq, isNull, type SQL } from 'drizzle-orm';
import { scopeOf, type Principal } from '../access/roles.js';
import { actorOf, recordAuditEvent } from '../audit/record.js';
import { endpointSnapshot } from '../audit/snapshots.js';
import { idWindow, type ListWindow } from '../db/list-window.js';
import type { Db } from '../db/client.js';
import { endpointSecrets, webhookEndpoints } from '../db/schema/index.js';
import { endpointStatusChanges } from '../metrics/outbox.js';
import { newId } from '../shared/ids.js';
import type { EndpointOrdering, SignatureScheme } from '../shared/outbound.js';
import { changedDestination, destinationValues, type DestinationInput } from './destinations/endpoint-values.js';
import { generateSigningKeyPair } from '../signing/index.js';
import { recordStatusChange } from './endpoint-status.js';
import type { SecretKeys } from '../shared/keyring.js';
import { generateEndpointSecret, insertEndpointSecret, rotateEndpointSecret } from './secrets.js';

export type Endpoint = typeof webhookEndpoints.$inferSelect;

export interface EndpointServiceDeps {
  db: Db;
  secretsKey: SecretKeys;
  now?: () => Date;
}

export type { DestinationInput };

export interface CreateEndpointInput {
  merchantAccount: string;
  /** An http endpoint's URL; a broker destination's is derived from its fields (its locator). */
  url?: string;
  destination?: DestinationInput;
  eventTypes: string[];
  livemode: boolean;
  description?: string | null;
  /** M3, default none. */
  ordering?: EndpointOrdering;
  /** M5, default null (no throttle). */
  rateLimitPerSecond?: number | null;
  /** O16, default apipay. */
  signatureScheme?: SignatureScheme;
  /** O17: also sign v1a with a new ed25519 key (standard scheme). */
  ed25519?: boolean;
}

export interface UpdateEndpointInput {
  url?: string;
  /** M11: fields of the endpoint's broker destination to change; a secret left out is kept. */
  destinationFields?: Record<string, unknown>;
  description?: string | null;
  eventTypes?: string[];
  ordering?: EndpointOrdering;
  rateLimitPerSecond?: number | null;
  signatureScheme?: SignatureScheme;
  /** O17: true gives the endpoint an ed25519 key (kept when it has one), false removes its keys. */
  ed25519?: boolean;
}

export class EndpointNotFoundError extends Error {
  override name = 'EndpointNotFoundError';
  constructor(readonly endpointId: string) {
    super(`webhook endpoint ${endpointId} does not exist`);
  }
}

/** ['*'] subscribes to every type; duplicates are dropped so the stored list reads as the operator meant it. */
export function normalizeEventTypes(types: string[]): string[] {
  const unique = [...new Set(types)];
  return unique.includes('*') ? ['*'] : unique;
}

/** Not deleted, and within the principal's account when it is a merchant key. */
function live(principal: Principal, id: string): SQL {
  const account = scopeOf(principal);
  return and(eq(webhookEndpoints.id, id), isNull(webhookEndpoints.deletedAt), account === undefined ? undefined : eq(webhookEndpoints.merchantAccount, account))!;
}

export function createEndpointService(deps: EndpointServiceDeps) {
  const { db, secretsKey } = deps;
  const now = deps.now ?? (() => new Date());

  async function get(principal: Principal, id: string): Promise<Endpoint> {
    const [row] = await db.select().from(webhookEndpoints).where(live(principal, id));
    if (!row) throw new EndpointNotFoundError(id);
    return row;
  }

  async function updateLive(
    principal: Principal,
    id: string,
    action: string,
    values: Partial<typeof webhookEndpoints.$inferInsert>,
    ed25519?: boolean,
  ): Promise<Endpoint> {
    const { row, statusChanged } = await db.transaction(async (tx) => {
      const [before] = await tx.select().from(webhookEndpoints).where(live(principal, id)).for('update');
      if (!before) throw new EndpointNotFoundError(id);
      const at = now();
      // O17: a key is made once and kept while asked for; removing it destroys its sealed rows.
      if (ed25519 === true && before.signingPublicKey === null) {
        const pair = generateSigningKeyPair();
        await insertEndpointSecret(tx, id, pair.signingKey, secretsKey, 'ed25519');
        values = { ...values, signingPublicKey: pair.publicKey };
      } else if (ed25519 === false && before.signingPublicKey !== null) {
        await tx.delete(endpointSecrets).where(and(eq(endpointSecrets.endpointId, id), eq(endpointSecrets.kind, 'ed25519')));
        values = { ...values, signingPublicKey: null };
      }
      const [row] = await tx.update(webhookEndpoints).set({ ...values, updatedAt: at }).where(eq(webhookEndpoints.id, id)).returning();
      await recordAuditEvent(tx, { actor: actorOf(principal), action, target: { type: 'webhook_endpoint', id }, before: endpointSnapshot(before), after: endpointSnapshot(row!) });
      // M4: a change of status is recorded and announced (endpoint.disabled / endpoint.enabled) in this transaction.
      const statusChanged = values.status !== undefined && values.status !== before.status;
      if (statusChanged) await recordStatusChange(tx, { endpoint: row!, from: before.status, to: row!.status, reason: row!.disabledReason, actor: `operator:${principal.name}`, at });
      return { row: row!, statusChanged };
    });
    if (statusChanged) endpointStatusChanges.inc({ to: row.status, actor: 'operator' });
    return row;
  }

  return {
    get,

    /** The plain secret is returned here and at rotation only; at rest it is AES-256-GCM encrypted. */
    async create(principal: Principal, input: CreateEndpointInput): Promise<{ endpoint: Endpoint; secret: string }> {
      const account = scopeOf(principal);
      if (account !== undefined && account !== input.merchantAccount) throw new Error('a merchant key creates endpoints of its own account only');
      const secret = generateEndpointSecret();
      const pair = input.ed25519 ? generateSigningKeyPair() : null;
      const id = newId('we');
      const destination = destinationValues(id, input, secretsKey);
      const endpoint = await db.transaction(async (tx) => {
        const [row] = await tx
          .insert(webhookEndpoints)
          .values({
            id,
            merchantAccount: input.merchantAccount,
            ...destination,
            description: input.description ?? null,
            eventTypes: normalizeEventTypes(input.eventTypes),
            livemode: input.livemode,
            ordering: input.ordering ?? 'none',
            rateLimitPerSecond: input.rateLimitPerSecond ?? null,
            // M11: a broker destination carries Standard Webhooks headers unless asked otherwise.
            signatureScheme: input.signatureScheme ?? (input.destination ? 'standard' : 'apipay'),
            signingPublicKey: pair?.publicKey ?? null,
          })
          .returning();
        await insertEndpointSecret(tx, row!.id, secret, secretsKey);
        if (pair) await insertEndpointSecret(tx, row!.id, pair.signingKey, secretsKey, 'ed25519');
        await recordAuditEvent(tx, { actor: actorOf(principal), action: 'endpoint.create', target: { type: 'webhook_endpoint', id: row!.id }, after: endpointSnapshot(row!) });
        return row!;
      });
      return { endpoint, secret };
    },

    async list(principal: Principal, filter: { merchantAccount?: string; afterId?: string; limit: number } & ListWindow): Promise<Endpoint[]> {
      const window = idWindow(webhookEndpoints.id, webhookEndpoints.createdAt, filter);
      const where: SQL[] = [isNull(webhookEndpoints.deletedAt), ...window.where];
      const account = scopeOf(principal);
      if (account !== undefined) where.push(eq(webhookEndpoints.merchantAccount, account));
      if (filter.merchantAccount !== undefined) where.push(eq(webhookEndpoints.merchantAccount, filter.merchantAccount));
      // limit + 1 tells the caller whether another page exists (see api/admin/pagination.ts).
      return db.select().from(webhookEndpoints).where(and(...where)).orderBy(...window.orderBy).limit(filter.limit + 1);
    },

    async update(principal: Principal, id: string, input: UpdateEndpointInput): Promise<Endpoint> {
      const values: Partial<typeof webhookEndpoints.$inferInsert> = {};
      if (input.destinationFields !== undefined) Object.assign(values, changedDestination(await get(principal, id), input.destinationFields, secretsKey));
      if (input.url !== undefined) values.url = input.url;
      if (input.description !== undefined) values.description = input.description;
      if (input.eventTypes !== undefined) values.eventTypes = normalizeEventTypes(input.eventTypes);
      // M3: ordering applies to deliveries fanned out after the change; M5: reserved slots stand, new ones follow the new rate.
      if (input.ordering !== undefined) values.ordering = input.ordering;
      if (input.rateLimitPerSecond !== undefined) values.rateLimitPerSecond = input.rateLimitPerSecond;
      // O16: audited with the other fields (endpointSnapshot); the sender reads it at each attempt.
      if (input.signatureScheme !== undefined) values.signatureScheme = input.signatureScheme;
      return updateLive(principal, id, 'endpoint.update', values, input.ed25519);
    },

    async disable(principal: Principal, id: string, reason: string): Promise<Endpoint> {
      return updateLive(principal, id, 'endpoint.disable', { status: 'disabled', disabledReason: reason, disabledAt: now() });
    },

    /** O13: enabling clears the failure streak, or the first failure after it would disable the endpoint again. */
    async enable(principal: Principal, id: string): Promise<Endpoint> {
      return updateLive(principal, id, 'endpoint.enable', { status: 'enabled', disabledReason: null, disabledAt: null, failingSince: null, consecutiveFailures: 0 });
    },

    async rotateSecret(principal: Principal, id: string, graceMs: number): Promise<{ endpoint: Endpoint; secret: string }> {
      return db.transaction(async (tx) => {
        const [endpoint] = await tx.select().from(webhookEndpoints).where(live(principal, id));
        if (!endpoint) throw new EndpointNotFoundError(id);
        const at = now();
        const secret = await rotateEndpointSecret(tx, id, secretsKey, graceMs, at);
        // O17: an ed25519 key rotates with the secret; the previous key also signs v1a during the grace period.
        let rotated: Endpoint | undefined = endpoint;
        if (endpoint.signingPublicKey !== null) {
          const pair = generateSigningKeyPair();
          await rotateEndpointSecret(tx, id, secretsKey, graceMs, at, 'ed25519', pair.signingKey);
          [rotated] = await tx.update(webhookEndpoints).set({ signingPublicKey: pair.publicKey, updatedAt: at }).where(eq(webhookEndpoints.id, id)).returning();
        }
        // The secret itself is never audited: only that it changed and until when the previous one signs.
        await recordAuditEvent(tx, {
          actor: actorOf(principal),
          action: 'endpoint.rotate_secret',
          target: { type: 'webhook_endpoint', id },
          after: {
            previous_signs_until: new Date(at.getTime() + graceMs).toISOString(),
            ...(rotated!.signingPublicKey !== null ? { signing_public_key: rotated!.signingPublicKey } : {}),
          },
        });
        return { endpoint: rotated!, secret };
      });
    },

    async remove(principal: Principal, id: string): Promise<void> {
      await db.transaction(async (tx) => {
        const at = now();
        const [before] = await tx.select().from(webhookEndpoints).where(live(principal, id)).for('update');
        if (!before) throw new EndpointNotFoundError(id);
        const [row] = await tx
          .update(webhookEndpoints)
          .set({ deletedAt: at, status: 'disabled', disabledReason: 'deleted', disabledAt: at, updatedAt: at })
          .where(eq(webhookEndpoints.id, id))
          .returning();
        await tx.delete(endpointSecrets).where(eq(endpointSecrets.endpointId, id));
        await recordAuditEvent(tx, { actor: actorOf(principal), action: 'endpoint.delete', target: { type: 'webhook_endpoint', id }, before: endpointSnapshot(before), after: endpointSnapshot(row!) });
      });
    },
  };
}

export type EndpointService = ReturnType<typeof createEndpointService>;
