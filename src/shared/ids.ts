// Prefixed, sortable public ids (whd_…, we_…): the prefix tells a reader what the id is, ULID keeps them ordered.
import { encodeTime, ulid } from 'ulid';

export type IdPrefix = 'whd' | 'we' | 'evt' | 'ltx' | 'opr' | 'adj' | 'adp' | 'smk' | 'apk' | 'aud' | 'esc' | 'pl' | 'prn';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${ulid().toLowerCase()}`;
}

/** C17: the smallest id of `prefix` minted at or after `at` (ULIDs sort by time): a lower bound for a time range by id. */
export function idFloor(prefix: IdPrefix, at: Date): string {
  return `${prefix}_${encodeTime(Math.max(0, at.getTime()), 10).toLowerCase()}${'0'.repeat(16)}`;
}

/** O6: the delivery id is the workflow id, so a second start of the same delivery is refused by Temporal. */
export const deliveryWorkflowId = (deliveryId: string) => deliveryId;

/** I6: one workflow per provider event, derived from provider + provider event id. */
export const reconciliationWorkflowId = (provider: string, providerEventId: string) =>
  `reconcile:${provider}:${providerEventId}`;
