// A24: a signed admin request is good only while it is fresh and its key is: the worker's resolution activity
// checks, besides the signature (request-signing.ts), that the workflow accepted the request within
// admin.signed_request_ttl of its issue time and that its key was not revoked, still has the signed role and
// still belongs to a person when the workflow accepted it. Both are judged at the time Temporal recorded the
// request in the history (not the activity's clock), so a retried activity gets the same answer as its first try,
// and a request copied from the history and sent again later is a new acceptance: expired, or refused once its
// key is revoked.
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { isIdpKey } from './idp-tokens.js';
import { BOOTSTRAP_KEY_ID } from './roles.js';

/** A clock ahead of the workflow's by this much still signs a request that is not "from the future". */
export const ISSUE_SKEW_MS = 60_000;

/** Pure: why a request issued at `issuedAt` and accepted at `acceptedAtMs` is stale, or null when it is fresh. */
export function staleProblem(issuedAt: unknown, acceptedAtMs: number, ttlMs: number): string | null {
  const issued = typeof issuedAt === 'string' ? Date.parse(issuedAt) : Number.NaN;
  if (Number.isNaN(issued)) return 'the admin API request carries no issue time: refused (send it again)';
  if (issued - acceptedAtMs > ISSUE_SKEW_MS) return 'the admin API request is signed in the future: refused';
  if (acceptedAtMs - issued > ttlMs) {
    const age = Math.round((acceptedAtMs - issued) / 1000);
    return `the admin API request expired: signed ${age} s before the workflow accepted it (admin.signed_request_ttl ${Math.round(ttlMs / 1000)} s): refused; send it again`;
  }
  return null;
}

/** Why key `keyId` could not sign as `role` at `atMs` (revoked, another role, no person), or null. */
export async function keyProblemAt(db: Db, keyId: string, role: string, atMs: number): Promise<string | null> {
  if (keyId === BOOTSTRAP_KEY_ID) return null; // ADMIN_TOKEN: valid while the process holds it (and it moves no money, A12)
  // A27: an IdP person has no key row; the API verified their access token (issuer, audience, expiry, second factor)
  // when it signed the request, and the request's TTL bounds how late it may be accepted. Revoking a person is the
  // IdP's: a disabled account gets no new token.
  if (isIdpKey(keyId)) return null;
  const rows = await db.execute(sql`
    select k.role, (extract(epoch from k.revoked_at) * 1000)::float8 as revoked_ms, p.id as person
      from public.api_keys k left join public.principals p on p.id = k.principal_id
     where k.id = ${keyId}`);
  const [key] = rows as unknown as Array<{ role: string; revoked_ms: number | null; person: string | null }>;
  if (!key) return `key ${keyId} does not exist: refused`;
  if (key.revoked_ms !== null && Number(key.revoked_ms) <= atMs) return `key ${keyId} is revoked: refused`;
  if (key.role !== role) return `key ${keyId} no longer has role ${role}: refused`;
  if (key.person === null) return `key ${keyId} belongs to no person: refused`;
  return null;
}
