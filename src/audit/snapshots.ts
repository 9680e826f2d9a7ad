// What the audit log keeps of each kind of object (A3): the fields an operator changes or reads to judge a change,
// in the API's spelling, never a secret (endpoint secrets and key hashes are simply not here).
import type { apiKeys, webhookEndpoints } from '../db/schema/index.js';
import type { Snapshot } from './record.js';

/** A URL's password (https://user:pass@host) is a credential: keep the rest. */
function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.password) return url;
    parsed.password = '';
    return parsed.toString();
  } catch {
    return url;
  }
}

const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Every column but the id and the bookkeeping times, so fields added later are audited too. */
export function endpointSnapshot(e: typeof webhookEndpoints.$inferSelect): Snapshot {
  // M2/M3/M5 bookkeeping the workers move on every attempt is not an operator's change: not in the snapshot.
  const {
    id: _id,
    createdAt: _created,
    updatedAt: _updated,
    consecutiveFailures: _f,
    orderSequence: _s,
    throttleNextAt: _n,
    throttleSentAt: _t,
    backoffRatePerSecond: _br,
    backoffUntil: _bu,
    recoveringSince: _rs,
    // M11: the sealed credentials are never audited, not even encrypted; only that they are set.
    destinationCredentials: _dc,
    destinationCredentialsKeyId: _dk,
    ...fields
  } = e;
  const out: Snapshot = {};
  for (const [key, value] of Object.entries(fields)) out[snake(key)] = value instanceof Date ? value.toISOString() : value;
  out.url = withoutPassword(e.url);
  if (e.destinationType !== 'http') out.destination_credentials = e.destinationCredentials ? 'set' : 'none';
  return out;
}

export const apiKeySnapshot = (k: typeof apiKeys.$inferSelect): Snapshot => ({
  name: k.name,
  role: k.role,
  merchant_account: k.merchantAccount,
  created_by: k.createdBy,
  principal_id: k.principalId,
  revoked_at: k.revokedAt?.toISOString() ?? null,
  revoked_by: k.revokedBy,
});
