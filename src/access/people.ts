// A12: people, not keys. A key belongs to a principal (a person, kind human, or a service), whose name is unique.
// Dual control (A5) asks `twoPeopleProblem` whether a proposer and an approver are two different people: never the
// same key, two keys of one principal, a key the other minted, the bootstrap token (ADMIN_TOKEN is nobody), or a
// Temporal identity (whatever a Temporal client calls itself, A14). A27: an approver who is an IdP subject is judged
// by `pairVerdict` (src/access/idp-approval.ts), with the first approvals recorded here (proposal_approvals).
import { eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { apiKeys, principals, proposalApprovals } from '../db/schema/index.js';
import { newId } from '../shared/ids.js';
import { pairVerdict, type PairVerdict } from './idp-approval.js';
import { isIdpKey } from './idp-tokens.js';
import { BOOTSTRAP_KEY_ID } from './roles.js';

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type PrincipalRow = typeof principals.$inferSelect;
export type PrincipalKind = 'human' | 'service';

/**
 * The principal named `name` (case-insensitive), created with `kind` by `createdBy` when there is none yet. A21:
 * through apipay_create_principal (migration 0029); the application role cannot insert a principal itself.
 */
export async function personNamed(
  tx: Db | Tx,
  name: string,
  kind: PrincipalKind,
  createdBy: string,
): Promise<{ row: PrincipalRow; created: boolean }> {
  const [row] = await tx.execute<{
    id: string;
    name: string;
    kind: string;
    created_at: string;
    created_by: string;
    created: boolean;
  }>(sql`select * from public.apipay_create_principal(${newId('prn')}, ${name}, ${kind}, ${createdBy})`);
  return {
    row: { id: row!.id, name: row!.name, kind: row!.kind, createdAt: new Date(row!.created_at), createdBy: row!.created_by },
    created: row!.created,
  };
}

/** The principal of each key id that is an API key (bootstrap and Temporal identities have none). */
async function keysInfo(db: Db | Tx, ids: string[]) {
  const keyIds = ids.filter((id) => id.startsWith('apk_'));
  if (keyIds.length === 0) return new Map<string, { principalId: string; createdBy: string }>();
  const rows = await db
    .select({ id: apiKeys.id, principalId: apiKeys.principalId, createdBy: apiKeys.createdBy })
    .from(apiKeys)
    .where(inArray(apiKeys.id, keyIds));
  return new Map(rows.map((r) => [r.id, r]));
}

/** The person of a key, if it is an API key. */
export async function personOfKey(db: Db | Tx, keyId: string): Promise<PrincipalRow | undefined> {
  if (!keyId.startsWith('apk_')) return undefined;
  const [row] = await db
    .select({ p: principals })
    .from(apiKeys)
    .innerJoin(principals, eq(principals.id, apiKeys.principalId))
    .where(eq(apiKeys.id, keyId));
  return row?.p;
}

/** A27: the IdP subjects that approved `proposalId` so far (the first of the two a non-person's proposal needs). */
export async function earlierApprovals(db: Db | Tx, proposalId: string): Promise<string[]> {
  const rows = await db
    .select({ key: proposalApprovals.approverKey })
    .from(proposalApprovals)
    .where(eq(proposalApprovals.proposalId, proposalId));
  return rows.map((r) => r.key);
}

/** A27: records an IdP subject's first approval; idempotent (true when this call wrote it). */
export async function recordFirstApproval(
  db: Db | Tx,
  proposalId: string,
  by: { key: string; name: string; requestId: string | null },
): Promise<boolean> {
  const rows = await db
    .insert(proposalApprovals)
    .values({ proposalId, approverKey: by.key, approverName: by.name, requestId: by.requestId })
    .onConflictDoNothing()
    .returning({ key: proposalApprovals.approverKey });
  return rows.length === 1;
}

/** A27: the verdict on an IdP subject's approval of `proposalId`, proposed under `proposerKey`. */
export async function idpApprovalVerdict(
  db: Db | Tx,
  proposalId: string,
  proposerKey: string,
  approverKey: string,
): Promise<PairVerdict> {
  return pairVerdict(proposerKey, approverKey, await earlierApprovals(db, proposalId));
}

/**
 * Why `approverKey` cannot approve what `proposerKey` proposed, or null when they are two different people. An IdP
 * approver (A27) of a non-person's proposal is refused here unless another IdP subject approved `proposalId` first
 * (the admin API records that first approval; this is the check the worker repeats).
 */
export async function twoPeopleProblem(
  db: Db | Tx,
  proposerKey: string,
  approverKey: string,
  proposalId?: string,
): Promise<string | null> {
  if (isIdpKey(approverKey)) {
    const verdict = pairVerdict(proposerKey, approverKey, proposalId ? await earlierApprovals(db, proposalId) : []);
    if (verdict.kind === 'refused') return verdict.problem;
    if (verdict.kind === 'first_of_two')
      return 'dual control: this was proposed by no person: two people signed in through the identity provider must approve it';
    return null;
  }
  if (approverKey === BOOTSTRAP_KEY_ID)
    return 'dual control: the bootstrap token (ADMIN_TOKEN) is not a person and approves nothing';
  if (!approverKey.startsWith('apk_'))
    return 'dual control: a proposal is approved by a person signed in to the admin API or the console, never through Temporal';
  if (approverKey === proposerKey) return 'dual control: you proposed this; a second person must approve it (or cancel it)';
  const info = await keysInfo(db, [proposerKey, approverKey]);
  const approver = info.get(approverKey);
  const proposer = info.get(proposerKey);
  if (!approver) return `dual control: key ${approverKey} is unknown`;
  if (proposer && proposer.principalId === approver.principalId) {
    return 'dual control: your keys belong to the person who proposed this; a second person must approve it';
  }
  const creators = await keysInfo(db, [approver.createdBy, ...(proposer ? [proposer.createdBy] : [])]);
  const approverMinter = creators.get(approver.createdBy)?.principalId;
  if (proposer && approverMinter === proposer.principalId) {
    return 'dual control: the approving key was created by the person who proposed this; a second person must approve it';
  }
  const proposerMinter = proposer ? creators.get(proposer.createdBy)?.principalId : undefined;
  if (proposer && proposerMinter === approver.principalId) {
    return 'dual control: the proposing key was created by the approving person; a third person must approve it';
  }
  return null;
}

/** Every key id of the people behind `keyIds` (their single-person budget is shared, A11), the ids themselves included. */
export async function siblingKeys(db: Db | Tx, keyIds: string[]): Promise<string[]> {
  const info = await keysInfo(db, keyIds);
  const people = [...new Set([...info.values()].map((k) => k.principalId))];
  if (people.length === 0) return keyIds;
  const rows = await db.select({ id: apiKeys.id }).from(apiKeys).where(inArray(apiKeys.principalId, people));
  return [...new Set([...keyIds, ...rows.map((r) => r.id)])];
}
