// API keys (A1): `apk_<ulid>_<secret>`. The apk_<ulid> part is the key's public id (lookup by primary key); the
// secret is 32 random bytes, base64url. Only SHA-256(secret) is stored and compared in constant time.
//
// Why a plain SHA-256 and not bcrypt/argon2: those slow hashes exist to make guessing a low-entropy password
// expensive. A 256-bit random secret cannot be guessed whatever the hash costs, so a fast hash loses nothing and
// keeps every admin request cheap; a stolen table of hashes does not give back a usable key.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { and, asc, eq, gt, isNull, sql, type SQL } from 'drizzle-orm';
import { actorOf, auditRow, recordAuditEvent } from '../audit/record.js';
import { apiKeySnapshot } from '../audit/snapshots.js';
import type { Db } from '../db/client.js';
import { apiKeys, principals } from '../db/schema/index.js';
import { newId } from '../shared/ids.js';
import type { PrincipalKind } from './people.js';
import { BOOTSTRAP_KEY_ID, type Principal, type Role } from './roles.js';

export type ApiKeyRow = typeof apiKeys.$inferSelect;

const TOKEN_PATTERN = /^(apk_[0-9a-z]{26})_([A-Za-z0-9_-]{43})$/;
export const KEY_ID_PATTERN = /^apk_[0-9a-z]{26}$/;

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** A new key: its id and the full token, which the caller shows once and never stores. */
export function generateApiKey(): { id: string; token: string; secretHash: Buffer } {
  const id = newId('apk');
  const secret = randomBytes(32).toString('base64url');
  return { id, token: `${id}_${secret}`, secretHash: sha256(secret) };
}

/** Splits a presented token; undefined when it is not shaped like one of ours (so it may be the bootstrap token). */
export function parseApiKey(token: string): { id: string; secret: string } | undefined {
  const match = TOKEN_PATTERN.exec(token);
  return match ? { id: match[1]!, secret: match[2]! } : undefined;
}

export class ApiKeyNotFoundError extends Error {
  override name = 'ApiKeyNotFoundError';
  constructor(readonly keyId: string) {
    super(`api key ${keyId} does not exist`);
  }
}

export interface CreateApiKeyInput {
  name: string;
  role: Role;
  merchantAccount: string | null;
  /** A12: the person (or service) the key belongs to, by name: found, or created with `kind`; absent: `name`. */
  person?: string | undefined;
  kind?: PrincipalKind | undefined;
}

/** A12: the bootstrap token creates admin keys (the first admin) and nothing else. */
export class BootstrapLimitError extends Error {
  override name = 'BootstrapLimitError';
}

/**
 * A28: with an identity provider, people sign in through it: a key belongs to a service (or a merchant's system),
 * never to a person, and may not join a person's principal; the bootstrap token creates service keys only.
 */
function idpKeyProblem(input: CreateApiKeyInput): string | null {
  if (input.kind === 'human') return 'people sign in through the identity provider: API keys are for services and merchants\' systems (kind service)';
  return null;
}

export function createApiKeyService(deps: { db: Db; now?: () => Date; peopleFromIdp?: boolean }) {
  const { db } = deps;
  const now = deps.now ?? (() => new Date());

  return {
    /** The principal a token stands for, or undefined (unknown, revoked, or a wrong secret: the caller cannot tell). */
    async authenticate(token: string): Promise<Principal | undefined> {
      const parsed = parseApiKey(token);
      if (!parsed) return undefined;
      const [row] = await db.select().from(apiKeys).where(eq(apiKeys.id, parsed.id));
      if (!row || row.revokedAt !== null) return undefined;
      if (!timingSafeEqual(sha256(parsed.secret), row.secretHash)) return undefined;
      return { keyId: row.id, name: row.name, role: row.role as Role, merchantAccount: row.merchantAccount, personId: row.principalId };
    },

    /** The principal of a key by its id alone, if it is not revoked: a console session re-checks its key with this (C1). */
    async active(id: string): Promise<Principal | undefined> {
      if (!KEY_ID_PATTERN.test(id)) return undefined;
      const [row] = await db.select().from(apiKeys).where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)));
      return row && { keyId: row.id, name: row.name, role: row.role as Role, merchantAccount: row.merchantAccount, personId: row.principalId };
    },

    async create(actor: Principal, input: CreateApiKeyInput): Promise<{ key: ApiKeyRow; token: string }> {
      const idpProblem = deps.peopleFromIdp ? idpKeyProblem(input) : null;
      if (idpProblem) throw new BootstrapLimitError(idpProblem);
      if (!deps.peopleFromIdp && actor.keyId === BOOTSTRAP_KEY_ID && input.role !== 'admin') {
        throw new BootstrapLimitError('the bootstrap token (ADMIN_TOKEN) creates admin keys only: create an admin key for a person, then the other keys with it');
      }
      const { id, token, secretHash } = generateApiKey();
      // A21: key, person (found or created) and audit row in one call of apipay_create_api_key (migration 0029).
      const key = await db.transaction(async (tx) => {
        const kind = input.kind ?? (input.role === 'merchant' || deps.peopleFromIdp ? 'service' : 'human');
        const createdAt = now();
        const values = { id, name: input.name, role: input.role, merchantAccount: input.merchantAccount, createdBy: actor.keyId, createdAt };
        // A12: the person the key belongs to is in the key's row; a person created with it is named so (the function adds them to `after`).
        const { principal_id: _principal, ...after } = apiKeySnapshot({ ...values, secretHash, revokedAt: null, revokedBy: null, principalId: '' });
        const audit = auditRow({ actor: actorOf(actor), action: 'api_key.create', target: { type: 'api_key', id }, after });
        const keyJson = { id, name: input.name, role: input.role, merchant_account: input.merchantAccount, secret_hash: secretHash.toString('hex'), created_by: actor.keyId, created_at: createdAt.toISOString() };
        const personJson = { id: newId('prn'), name: (input.person ?? input.name).trim(), kind };
        await tx.execute(sql`select * from public.apipay_create_api_key(${JSON.stringify(keyJson)}::jsonb, ${JSON.stringify(personJson)}::jsonb, ${JSON.stringify(audit)}::jsonb)`);
        const [row] = await tx.select().from(apiKeys).where(eq(apiKeys.id, id));
        // A28: a service key may not join a person found by that name (the refusal undoes the whole call).
        const [person] = await tx.select({ name: principals.name, kind: principals.kind }).from(principals).where(eq(principals.id, row!.principalId));
        if (deps.peopleFromIdp && person?.kind !== 'service') {
          throw new BootstrapLimitError(`"${person?.name}" is a person: a service key cannot belong to them (people sign in through the identity provider)`);
        }
        return row!;
      });
      return { key, token };
    },

    async list(filter: { afterId?: string; limit: number; includeRevoked: boolean }): Promise<ApiKeyRow[]> {
      const where: SQL[] = [];
      if (!filter.includeRevoked) where.push(isNull(apiKeys.revokedAt));
      if (filter.afterId !== undefined) where.push(gt(apiKeys.id, filter.afterId));
      return db.select().from(apiKeys).where(and(...where)).orderBy(asc(apiKeys.id)).limit(filter.limit + 1);
    },

    /** Idempotent: revoking a revoked key returns it unchanged (first revocation's time and author; audited once). */
    async revoke(actor: Principal, id: string): Promise<ApiKeyRow> {
      return db.transaction(async (tx) => {
        // A21: the lock and the revocation are apipay_revoke_api_key's; it answers whether the key was revoked already.
        const [answer] = await tx.execute<{ was_revoked: boolean }>(sql`select * from public.apipay_revoke_api_key(${id}, ${actor.keyId}, ${now().toISOString()}::timestamptz)`);
        if (!answer) throw new ApiKeyNotFoundError(id);
        const [revoked] = await tx.select().from(apiKeys).where(eq(apiKeys.id, id));
        if (answer.was_revoked) return revoked!;
        const before = apiKeySnapshot({ ...revoked!, revokedAt: null, revokedBy: null });
        await recordAuditEvent(tx, { actor: actorOf(actor), action: 'api_key.revoke', target: { type: 'api_key', id }, before, after: apiKeySnapshot(revoked!) });
        return revoked!;
      });
    },
  };
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;
