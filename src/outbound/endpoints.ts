// Webhook endpoint service (requirements §4): create with a secret shown once, read, list, update, disable/enable, delete.
// Deletion is soft (deleted_at + disabled): deliveries keep referencing the endpoint, so their history stays
// queryable, no new delivery is fanned out to it and no attempt is sent; its secrets are destroyed.
import { and, eq, isNull, type SQL } from 'drizzle-orm';
import { idWindow, type ListWindow } from '../db/list-window.js';
import type { Db } from '../db/client.js';
import { endpointSecrets, webhookEndpoints } from '../db/schema/index.js';
import { newId } from '../shared/ids.js';
import { generateEndpointSecret, insertEndpointSecret, rotateEndpointSecret } from './secrets.js';

export type Endpoint = typeof webhookEndpoints.$inferSelect;

export interface EndpointServiceDeps {
  db: Db;
  secretsKey: Buffer;
  now?: () => Date;
}

export interface CreateEndpointInput {
  merchantAccount: string;
  url: string;
  eventTypes: string[];
  livemode: boolean;
  description?: string | null;
}

export interface UpdateEndpointInput {
  url?: string;
  description?: string | null;
  eventTypes?: string[];
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

const live = (id: string) => and(eq(webhookEndpoints.id, id), isNull(webhookEndpoints.deletedAt));

export function createEndpointService(deps: EndpointServiceDeps) {
  const { db, secretsKey } = deps;
  const now = deps.now ?? (() => new Date());

  async function get(id: string): Promise<Endpoint> {
    const [row] = await db.select().from(webhookEndpoints).where(live(id));
    if (!row) throw new EndpointNotFoundError(id);
    return row;
  }

  async function updateLive(id: string, values: Partial<typeof webhookEndpoints.$inferInsert>): Promise<Endpoint> {
    const [row] = await db.update(webhookEndpoints).set({ ...values, updatedAt: now() }).where(live(id)).returning();
    if (!row) throw new EndpointNotFoundError(id);
    return row;
  }

  return {
    get,

    /** The plain secret is returned here and at rotation only; at rest it is AES-256-GCM encrypted. */
    async create(input: CreateEndpointInput): Promise<{ endpoint: Endpoint; secret: string }> {
      const secret = generateEndpointSecret();
      const endpoint = await db.transaction(async (tx) => {
        const [row] = await tx
          .insert(webhookEndpoints)
          .values({
            id: newId('we'),
            merchantAccount: input.merchantAccount,
            url: input.url,
            description: input.description ?? null,
            eventTypes: normalizeEventTypes(input.eventTypes),
            livemode: input.livemode,
          })
          .returning();
        await insertEndpointSecret(tx, row!.id, secret, secretsKey);
        return row!;
      });
      return { endpoint, secret };
    },

    async list(filter: { merchantAccount?: string; afterId?: string; limit: number } & ListWindow): Promise<Endpoint[]> {
      const window = idWindow(webhookEndpoints.id, webhookEndpoints.createdAt, filter);
      const where: SQL[] = [isNull(webhookEndpoints.deletedAt), ...window.where];
      if (filter.merchantAccount !== undefined) where.push(eq(webhookEndpoints.merchantAccount, filter.merchantAccount));
      // limit + 1 tells the caller whether another page exists (see api/admin/pagination.ts).
      return db.select().from(webhookEndpoints).where(and(...where)).orderBy(...window.orderBy).limit(filter.limit + 1);
    },

    async update(id: string, input: UpdateEndpointInput): Promise<Endpoint> {
      const values: Partial<typeof webhookEndpoints.$inferInsert> = {};
      if (input.url !== undefined) values.url = input.url;
      if (input.description !== undefined) values.description = input.description;
      if (input.eventTypes !== undefined) values.eventTypes = normalizeEventTypes(input.eventTypes);
      return updateLive(id, values);
    },

    async disable(id: string, reason: string): Promise<Endpoint> {
      return updateLive(id, { status: 'disabled', disabledReason: reason, disabledAt: now() });
    },

    /** O13: enabling clears the failure streak, or the first failure after it would disable the endpoint again. */
    async enable(id: string): Promise<Endpoint> {
      return updateLive(id, { status: 'enabled', disabledReason: null, disabledAt: null, failingSince: null });
    },

    async rotateSecret(id: string, graceMs: number): Promise<{ endpoint: Endpoint; secret: string }> {
      const endpoint = await get(id);
      const secret = await rotateEndpointSecret(db, id, secretsKey, graceMs, now());
      return { endpoint, secret };
    },

    async remove(id: string): Promise<void> {
      await db.transaction(async (tx) => {
        const at = now();
        const [row] = await tx
          .update(webhookEndpoints)
          .set({ deletedAt: at, status: 'disabled', disabledReason: 'deleted', disabledAt: at, updatedAt: at })
          .where(live(id))
          .returning({ id: webhookEndpoints.id });
        if (!row) throw new EndpointNotFoundError(id);
        await tx.delete(endpointSecrets).where(eq(endpointSecrets.endpointId, id));
      });
    },
  };
}

export type EndpointService = ReturnType<typeof createEndpointService>;
