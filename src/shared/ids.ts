// Prefixed, sortable public ids (whd_…, we_…): the prefix tells a reader what the id is, ULID keeps them ordered.
// P14: the random part comes from a pooled buffer filled 4 KB at a time; the ulid package's own generator asks the
// kernel for one byte per character (16 calls per id), which was 1 s of the dispatcher's CPU per 20,000 deliveries.
import { randomFillSync } from 'node:crypto';
import { encodeTime } from 'ulid';

export type IdPrefix = 'whd' | 'we' | 'evt' | 'ltx' | 'opr' | 'adj' | 'adp' | 'smk' | 'apk' | 'aud' | 'esc' | 'pl' | 'prn';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lowercase (the ids are lowercase)
const pool = Buffer.alloc(4096);
let used = pool.length;

/** 16 characters, 80 random bits: one pooled byte each, of which 5 bits (256 is a multiple of 32: uniform). */
function randomPart(): string {
  if (used + 16 > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  let out = '';
  for (let i = 0; i < 16; i++) out += ALPHABET[pool[used++]! & 31];
  return out;
}

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${encodeTime(Date.now(), 10).toLowerCase()}${randomPart()}`;
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
