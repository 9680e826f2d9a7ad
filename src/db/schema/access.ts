// Access tables (A1): API keys. The secret is never stored, only its SHA-256; revocation is a timestamp, not a delete.
import { sql } from 'drizzle-orm';
import { check, index, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
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
  },
  (t) => [
    check('api_keys_role_ck', sql`${t.role} in ('viewer', 'operator', 'admin', 'merchant')`),
    check('api_keys_merchant_ck', sql`(${t.role} = 'merchant') = (${t.merchantAccount} is not null)`),
    check('api_keys_revoked_ck', sql`(${t.revokedAt} is null) = (${t.revokedBy} is null)`),
    index('api_keys_merchant_idx').on(t.merchantAccount),
  ],
);
