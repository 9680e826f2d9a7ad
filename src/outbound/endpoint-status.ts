// M4: an endpoint's status change is recorded (the admin feed, endpoint_status_changes) and announced to the
// merchant as endpoint.disabled / endpoint.enabled through the outbox, both in the transaction of the change. The
// dispatcher fans the event out like any other: to the account's enabled endpoints subscribed to the type, so a
// disabled endpoint never hears of its own disable.
import { and, desc, eq, lt, type SQL } from 'drizzle-orm';
import { scopeOf, type Principal } from '../access/roles.js';
import type { Db } from '../db/client.js';
import { endpointStatusChanges } from '../db/schema/index.js';
import { writeOutbox, type Executor } from '../outbox/store.js';
import { newId } from '../shared/ids.js';
import type { EndpointStatus } from '../shared/outbound.js';

export type StatusChange = typeof endpointStatusChanges.$inferSelect;

export interface StatusChangeInput {
  endpoint: { id: string; merchantAccount: string; livemode: boolean };
  from: EndpointStatus;
  to: EndpointStatus;
  reason: string | null;
  /** 'system' for the O13 auto-disable, 'operator:<key name>' for the admin API. */
  actor: string;
  at: Date;
}

export async function recordStatusChange(tx: Executor, change: StatusChangeInput): Promise<StatusChange> {
  const id = newId('esc');
  const eventPublicId = `evt_${id}`;
  const [row] = await tx
    .insert(endpointStatusChanges)
    .values({
      id,
      endpointId: change.endpoint.id,
      merchantAccount: change.endpoint.merchantAccount,
      fromStatus: change.from,
      toStatus: change.to,
      reason: change.reason,
      actor: change.actor,
      eventPublicId,
      createdAt: change.at,
    })
    .returning();
  await writeOutbox(tx, {
    eventPublicId,
    type: change.to === 'disabled' ? 'endpoint.disabled' : 'endpoint.enabled',
    merchantAccount: change.endpoint.merchantAccount,
    livemode: change.endpoint.livemode,
    data: statusChangeObject(id, change),
  });
  return row!;
}

/** M8: the event's data.object (src/catalog/events/endpoint.disabled.v1.json). */
export function statusChangeObject(id: string, change: StatusChangeInput): Record<string, unknown> {
  return {
    id: change.endpoint.id,
    object: 'webhook_endpoint',
    status: change.to,
    previous_status: change.from,
    reason: change.reason,
    changed_at: change.at.toISOString(),
    changed_by: change.actor === 'system' ? 'system' : 'operator',
    status_change_id: id,
  };
}

/** The feed, newest first, cursor = the last id of the previous page; a merchant key sees its own account only. */
export async function listStatusChanges(
  db: Db,
  principal: Principal,
  filter: { endpointId?: string; toStatus?: EndpointStatus; beforeId?: string; limit: number },
): Promise<StatusChange[]> {
  const where: SQL[] = [];
  const account = scopeOf(principal);
  if (account !== undefined) where.push(eq(endpointStatusChanges.merchantAccount, account));
  if (filter.endpointId !== undefined) where.push(eq(endpointStatusChanges.endpointId, filter.endpointId));
  if (filter.toStatus !== undefined) where.push(eq(endpointStatusChanges.toStatus, filter.toStatus));
  if (filter.beforeId !== undefined) where.push(lt(endpointStatusChanges.id, filter.beforeId));
  return db
    .select()
    .from(endpointStatusChanges)
    .where(where.length ? and(...where) : undefined)
    .orderBy(desc(endpointStatusChanges.id))
    .limit(filter.limit + 1);
}
