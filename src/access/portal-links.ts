// Portal links (C2, A15): minted by an operator or admin for one merchant account, kept as rows so a link opens
// once, can be revoked, and is audited on creation, use and revocation with the minter named. A link's session
// is a merchant principal whose ceiling is the minter's role: it may do only what the minter may do for that account.
import { and, eq, isNull } from 'drizzle-orm';
import { actorOf, recordAuditEvent } from '../audit/record.js';
import type { Db } from '../db/client.js';
import { consoleSessions, portalLinks } from '../db/schema/index.js';
import { newId } from '../shared/ids.js';
import type { Principal, StaffRole } from './roles.js';

export type PortalLinkRow = typeof portalLinks.$inferSelect;

export const PORTAL_LINK_ID_PATTERN = /^pl_[0-9a-z]{26}$/;

export class PortalLinkNotFoundError extends Error {
  override name = 'PortalLinkNotFoundError';
  constructor(readonly linkId: string) {
    super(`portal link ${linkId} does not exist`);
  }
}

/** Why a link cannot be opened (the page says it without telling which one to a stranger). */
export type UnusableReason = 'unknown' | 'used' | 'revoked' | 'expired';

/** The principal of a link's session: the account's merchant, capped at the minter's role, named after the minter. */
export function linkPrincipal(
  link: Pick<PortalLinkRow, 'id' | 'merchantAccount' | 'createdBy' | 'createdByName'>,
  ceiling: StaffRole,
): Principal {
  return {
    keyId: `portal-link:${link.id}`,
    name: `${link.createdByName} (${link.createdBy}) via portal link ${link.id}`,
    role: 'merchant',
    merchantAccount: link.merchantAccount,
    ceiling,
  };
}

export const portalLinkSnapshot = (l: PortalLinkRow) => ({
  merchant_account: l.merchantAccount,
  created_by: l.createdBy,
  created_by_name: l.createdByName,
  created_by_role: l.createdByRole,
  expires_at: l.expiresAt.toISOString(),
  used_at: l.usedAt?.toISOString() ?? null,
  revoked_at: l.revokedAt?.toISOString() ?? null,
  revoked_by: l.revokedBy,
});

export function createPortalLinkService(deps: { db: Db; now?: () => Date }) {
  const { db } = deps;
  const now = deps.now ?? (() => new Date());

  return {
    /** A new link row for `merchantAccount`, audited with its minter (a staff principal of role operator or admin). */
    async mint(minter: Principal, merchantAccount: string, ttlMs: number): Promise<PortalLinkRow> {
      if (minter.role !== 'operator' && minter.role !== 'admin') throw new Error(`a ${minter.role} may not mint portal links`);
      return db.transaction(async (tx) => {
        const [row] = await tx
          .insert(portalLinks)
          .values({
            id: newId('pl'),
            merchantAccount,
            createdBy: minter.keyId,
            createdByName: minter.name,
            createdByRole: minter.role,
            createdAt: now(),
            expiresAt: new Date(now().getTime() + ttlMs),
          })
          .returning();
        await recordAuditEvent(tx, {
          actor: actorOf(minter),
          action: 'portal_link.create',
          target: { type: 'portal_link', id: row!.id },
          after: portalLinkSnapshot(row!),
        });
        return row!;
      });
    },

    /** Marks the link used, once: the one opening that may start a session. Audited as the link's principal. */
    async use(id: string, requestId?: string): Promise<PortalLinkRow | UnusableReason> {
      return db.transaction(async (tx) => {
        const [before] = await tx.select().from(portalLinks).where(eq(portalLinks.id, id)).for('update');
        if (!before) return 'unknown';
        if (before.revokedAt) return 'revoked';
        if (before.usedAt) return 'used';
        if (before.expiresAt.getTime() <= now().getTime()) return 'expired';
        const [row] = await tx.update(portalLinks).set({ usedAt: now() }).where(eq(portalLinks.id, id)).returning();
        const principal = { ...linkPrincipal(row!, row!.createdByRole as StaffRole), ...(requestId ? { requestId } : {}) };
        await recordAuditEvent(tx, {
          actor: actorOf(principal),
          action: 'portal_link.use',
          target: { type: 'portal_link', id },
          before: portalLinkSnapshot(before),
          after: portalLinkSnapshot(row!),
        });
        return row!;
      });
    },

    /** Refuses the link from now on and ends the sessions it opened; revoking again changes nothing (audited once). */
    async revoke(actor: Principal, id: string): Promise<PortalLinkRow> {
      return db.transaction(async (tx) => {
        const [before] = await tx.select().from(portalLinks).where(eq(portalLinks.id, id)).for('update');
        if (!before) throw new PortalLinkNotFoundError(id);
        if (before.revokedAt) return before;
        const [row] = await tx
          .update(portalLinks)
          .set({ revokedAt: now(), revokedBy: actor.keyId })
          .where(eq(portalLinks.id, id))
          .returning();
        await tx
          .update(consoleSessions)
          .set({ endedAt: now(), endedReason: 'link_revoked' })
          .where(and(eq(consoleSessions.portalLinkId, id), isNull(consoleSessions.endedAt)));
        await recordAuditEvent(tx, {
          actor: actorOf(actor),
          action: 'portal_link.revoke',
          target: { type: 'portal_link', id },
          before: portalLinkSnapshot(before),
          after: portalLinkSnapshot(row!),
        });
        return row!;
      });
    },
  };
}

export type PortalLinkService = ReturnType<typeof createPortalLinkService>;
