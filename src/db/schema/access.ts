// Access tables (A1, A12, A15, A16): API keys (the secret is never stored, only its SHA-256; revocation is a timestamp,
// not a delete), the principals (people, services) they belong to, the portal's links and the console's and portal's
// sessions.
import { sql } from 'drizzle-orm';
import { check, index, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { bytea } from './outbound.js';

export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(), // apk_<ulid>: the public part of the key, also its first characters
    name: text('name').notNull(),
    role: text('role').notNull(),
    /** Only for role merchant: the one account this key sees. */
    merchantAccount: text('merchant_account'),
    /** SHA-256 of the 256-bit random secret part (see src/access/api-keys.ts for why no slow hash is needed). */
    secretHash: bytea('secret_hash').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    createdBy: text('created_by').notNull(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    revokedBy: text('revoked_by'),
    /** A12 (migration 0018): the person or service the key belongs to. */
    principalId: text('principal_id').notNull(),
  },
  (t) => [
    check('api_keys_role_ck', sql`${t.role} in ('viewer', 'operator', 'admin', 'merchant')`),
    check('api_keys_merchant_ck', sql`(${t.role} = 'merchant') = (${t.merchantAccount} is not null)`),
    check('api_keys_revoked_ck', sql`(${t.revokedAt} is null) = (${t.revokedBy} is null)`),
    index('api_keys_merchant_idx').on(t.merchantAccount),
    index('api_keys_principal_idx').on(t.principalId),
  ],
);

/** A12 (migration 0018): a person or a service; its name is unique (case-insensitive); never edited or deleted. */
export const principals = pgTable(
  'principals',
  {
    id: text('id').primaryKey(), // prn_<ulid>
    name: text('name').notNull(),
    kind: text('kind').notNull(), // human | service
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** The key id (or bootstrap) that created it. */
    createdBy: text('created_by').notNull(),
  },
  (t) => [
    check('principals_kind_ck', sql`${t.kind} in ('human', 'service')`),
    uniqueIndex('principals_name_uq').on(sql`lower(${t.name})`),
  ],
);

/** A15: a signed link to one merchant's portal, single-use and revocable; its sessions never exceed its minter's role. */
export const portalLinks = pgTable(
  'portal_links',
  {
    id: text('id').primaryKey(), // pl_<ulid>, also inside the link's signed token
    merchantAccount: text('merchant_account').notNull(),
    /** The key (or `bootstrap`) that minted it, its name and its role then: the link's ceiling and the audit's person. */
    createdBy: text('created_by').notNull(),
    createdByName: text('created_by_name').notNull(),
    createdByRole: text('created_by_role').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    revokedBy: text('revoked_by'),
  },
  (t) => [
    check('portal_links_role_ck', sql`${t.createdByRole} in ('operator', 'admin')`),
    check('portal_links_revoked_ck', sql`(${t.revokedAt} is null) = (${t.revokedBy} is null)`),
    index('portal_links_merchant_idx').on(t.merchantAccount),
  ],
);

/** A16: a signed-in console or portal session; the cookie names its id, and the row must still be open. */
export const consoleSessions = pgTable(
  'console_sessions',
  {
    id: text('id').primaryKey(), // the cookie's random session id
    surface: text('surface').notNull(),
    subject: text('subject').notNull(),
    /** The key signed in with, `bootstrap`, or for a link session the link's minter. */
    keyId: text('key_id').notNull(),
    /** The role when the session began: a different role now ends the session. */
    role: text('role').notNull(),
    portalLinkId: text('portal_link_id').references(() => portalLinks.id),
    /** A30: an IdP person's session: who the ID token named (a Principal with its idp identity). */
    idpPrincipal: jsonb('idp_principal').$type<Record<string, unknown>>(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    endedAt: timestamp('ended_at', { withTimezone: true }),
    endedReason: text('ended_reason'),
  },
  (t) => [
    check('console_sessions_surface_ck', sql`${t.surface} in ('console', 'portal')`),
    check('console_sessions_subject_ck', sql`${t.subject} in ('key', 'bootstrap', 'link', 'idp')`),
    check('console_sessions_idp_ck', sql`(${t.subject} = 'idp') = (${t.idpPrincipal} is not null)`),
    check('console_sessions_link_ck', sql`(${t.subject} = 'link') = (${t.portalLinkId} is not null)`),
    check('console_sessions_ended_ck', sql`(${t.endedAt} is null) = (${t.endedReason} is null)`),
    index('console_sessions_key_idx')
      .on(t.keyId)
      .where(sql`${t.endedAt} is null`),
    index('console_sessions_link_idx')
      .on(t.portalLinkId)
      .where(sql`${t.endedAt} is null`),
  ],
);
