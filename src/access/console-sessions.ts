// Server-side sessions of the console and the portal (C1, C2, A16): the signed cookie names a row here, and a
// request is signed in only while that row is open and unexpired. Sign-out, a revoked key or link, and a role that
// is no longer the one signed in with end the row, so a copied cookie stops working at once. A30: an IdP person's
// row keeps who the ID token named (idp_principal).
import { and, eq, gt, isNull } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { consoleSessions, portalLinks } from '../db/schema/index.js';
import type { Principal } from './roles.js';

export type SessionRow = typeof consoleSessions.$inferSelect;
export type EndReason = 'signed_out' | 'credential_gone' | 'role_changed' | 'link_revoked';

export interface OpenSession {
  id: string;
  surface: 'console' | 'portal';
  subject: 'key' | 'bootstrap' | 'link' | 'idp';
  /** The key signed in with, `bootstrap`, the link's minter, or the IdP person's idp:<sub>@<issuer>. */
  keyId: string;
  role: string;
  portalLinkId?: string;
  /** A30: the IdP person (subject 'idp' only). */
  idpPrincipal?: Principal;
  expiresAt: Date;
}

export function createConsoleSessionStore(deps: { db: Db; now?: () => Date }) {
  const { db } = deps;
  const now = deps.now ?? (() => new Date());

  return {
    async open(s: OpenSession): Promise<void> {
      await db.insert(consoleSessions).values({
        id: s.id,
        surface: s.surface,
        subject: s.subject,
        keyId: s.keyId,
        role: s.role,
        portalLinkId: s.portalLinkId ?? null,
        idpPrincipal: (s.idpPrincipal as unknown as Record<string, unknown> | undefined) ?? null,
        createdAt: now(),
        expiresAt: s.expiresAt,
      });
    },

    /** The open, unexpired session of this id, with its portal link when it has one; undefined otherwise. */
    async current(id: string) {
      const [found] = await db
        .select({ session: consoleSessions, link: portalLinks })
        .from(consoleSessions)
        .leftJoin(portalLinks, eq(portalLinks.id, consoleSessions.portalLinkId))
        .where(and(eq(consoleSessions.id, id), isNull(consoleSessions.endedAt), gt(consoleSessions.expiresAt, now())));
      if (!found || (found.link && found.link.revokedAt)) return undefined;
      return found;
    },

    async end(id: string, reason: EndReason): Promise<void> {
      await db
        .update(consoleSessions)
        .set({ endedAt: now(), endedReason: reason })
        .where(and(eq(consoleSessions.id, id), isNull(consoleSessions.endedAt)));
    },
  };
}

export type ConsoleSessionStore = ReturnType<typeof createConsoleSessionStore>;
