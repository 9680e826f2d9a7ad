// Access tables (A1, A12): API keys and the principals (people, services) they belong to. The secret is never stored, only its SHA-256; revocation is a timestamp, not a delete.
import { sql } from 'drizzle-orm';
import { check, index, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
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
