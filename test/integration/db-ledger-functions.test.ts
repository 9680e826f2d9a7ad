// A21 on the real PostgreSQL, connected as the application role: the ledger, the keys, the people and the money
// columns of a reconciliation refuse every direct write; the only way in is the SECURITY DEFINER functions of
// migration 0029, which refuse an unbalanced posting, a reused key with other content, a wrong content hash and
// entries for a transaction that already has them. The owner cannot append entries to an old transaction either.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Database } from '../../src/db/client.js';
import { createHash } from 'node:crypto';
import { createApiKeyService } from '../../src/access/api-keys.js';
import { BOOTSTRAP_KEY_ID } from '../../src/access/roles.js';
import { LEDGER_FUNCTIONS } from '../../src/db/grants.js';
import { reconciliations } from '../../src/db/schema/index.js';
import { AdjustmentRefusedError, postAdjustment } from '../../src/ledger/adjustments.js';
import { buildPosting, contentHash, type Posting } from '../../src/ledger/postings.js';
import { postTransaction } from '../../src/ledger/store.js';
import { TEST_APP_DATABASE_URL } from '../helpers/env.js';
import { attempt, roleDatabases } from '../helpers/role-databases.js';

const { app, owner } = roleDatabases({ app: 2, owner: 2 });

const unique = (label: string) => `${label}_${randomUUID().slice(0, 8)}`;

const payment = (provider: string, ref: string, amountMinor = '1000') =>
  buildPosting({
    kind: 'payment',
    provider,
    providerEventId: unique('evt'),
    paymentReference: ref,
    amountMinor,
    currency: 'EUR',
  });

const header = (posting: Posting, extra: Record<string, unknown> = {}) => ({
  id: unique('ltx_a21'),
  idempotency_key: posting.idempotencyKey,
  content_hash: contentHash(posting),
  kind: posting.kind,
  provider: posting.provider,
  payment_reference: posting.paymentReference,
  effective_at: new Date().toISOString(),
  description: 'a21',
  metadata: { providerEventId: 'evt_a21', reconciliationId: 'none', actor: 'system' },
  ...extra,
});
const entriesOf = (posting: Posting) =>
  posting.entries.map((e) => ({ account: e.account, currency: e.currency, amount_minor: e.amountMinor.toString() }));

/** Calls the posting function as the application role; its answer row, or the refusal's message. */
async function callPost(
  h: Record<string, unknown>,
  entries: unknown,
): Promise<{ status: string; transaction_id: string } | string> {
  try {
    const [row] =
      await app.sql`select * from public.apipay_post_ledger_transaction(${JSON.stringify(h)}::jsonb, ${JSON.stringify(entries)}::jsonb)`;
    return row as { status: string; transaction_id: string };
  } catch (error) {
    return (error as Error).message;
  }
}

/** A payment posted long ago, through the application's own path (as the owner, the way a process did before). */
async function oldPayment(): Promise<{ id: string; provider: string; ref: string }> {
  const provider = unique('a21');
  const ref = unique('pi');
  const posted = await postTransaction(owner.db, payment(provider, ref), {
    providerEventId: unique('evt'),
    reconciliationId: 'none',
    effectiveAt: new Date().toISOString(),
    actor: 'system',
  });
  return { id: posted.transactionId, provider, ref };
}

describe('A21 the application role writes the ledger, keys and people only through their functions', () => {
  it('A21 two balanced entries appended to a transaction committed earlier are refused, for the application role and the owner', async () => {
    const old = await oldPayment();
    const append = (db: Database) =>
      attempt(
        db.sql`insert into ledger_entries (transaction_id, account, amount_minor, currency) values (${old.id}, ${`payments:${old.provider}:${old.ref}`}, 500, 'EUR'), (${old.id}, ${`provider_clearing:${old.provider}`}, -500, 'EUR')`,
      );
    expect(await append(app)).toMatch('permission denied for table ledger_entries');
    expect(await append(owner)).toMatch(`ledger transaction ${old.id} already has its entries`);
    const [n] = await owner.sql`select count(*)::int as n from ledger_entries where transaction_id = ${old.id}`;
    expect(n!.n).toBe(2);
  });

  it('A21 a ledger transaction, an adjustment row, a principal or an api key inserted directly is refused', async () => {
    const id = unique('ltx_a21');
    expect(
      await attempt(
        app.sql`insert into ledger_transactions (id, idempotency_key, content_hash, kind, payment_reference, effective_at) values (${id}, ${id}, 'h', 'payment', 'pi_a21', now())`,
      ),
    ).toMatch('permission denied for table ledger_transactions');
    expect(
      await attempt(
        app.sql`insert into ledger_adjustments (id, provider, payment_reference, amount_minor, currency, operator, reason, ledger_transaction_id) values (${id}, 'p', 'r', 1, 'EUR', 'o', 'r', ${id})`,
      ),
    ).toMatch('permission denied for table ledger_adjustments');
    expect(
      await attempt(
        app.sql`insert into principals (id, name, kind, created_by) values (${unique('prn')}, ${unique('mallory')}, 'human', 'bootstrap')`,
      ),
    ).toMatch('permission denied for table principals');
    expect(
      await attempt(
        app.sql`insert into api_keys (id, name, role, secret_hash, created_by, principal_id) values (${unique('apk')}, 'mallory', 'admin', '\\x00', 'bootstrap', 'prn_x')`,
      ),
    ).toMatch('permission denied for table api_keys');
    expect(await attempt(app.sql`update api_keys set revoked_at = now(), revoked_by = 'x' where false`)).toMatch(
      'permission denied for table api_keys',
    );
    expect(await attempt(app.sql`select * from api_keys for update`)).toMatch('permission denied for table api_keys');
  });

  it('A21 the money columns of a reconciliation cannot be written directly; its state can', async () => {
    for (const set of [
      'provider_currency = null',
      'provider_amount_minor = 1',
      'amount_minor = 1',
      'currency = null',
      'payment_reference = null',
      'provider = null',
      'discrepancy = null',
    ]) {
      expect(await attempt(app.sql.unsafe(`update reconciliations set ${set} where false`))).toMatch(
        'permission denied for table reconciliations',
      );
    }
    expect(
      await attempt(
        app.sql`insert into reconciliations (id, provider, provider_event_id, event_type, payment_reference, amount_minor, currency, effective_at, state, acknowledged_at) values ('x', 'p', 'e', 't', 'r', 1, 'EUR', now(), 's', now())`,
      ),
    ).toMatch('permission denied for table reconciliations');
    expect(
      await attempt(
        app.sql`update reconciliations set state = state, reason = reason, ledger_transaction_id = ledger_transaction_id, updated_at = now() where false`,
      ),
    ).toBe('ok');
  });

  it('A21 the posting function refuses an unbalanced posting, a wrong content hash and malformed entries', async () => {
    const posting = payment(unique('a21'), unique('pi'));
    const entries = entriesOf(posting);
    const unbalanced = [entries[0], { ...entries[1]!, amount_minor: '-999' }];
    expect(await callPost(header(posting, { content_hash: undefined }), unbalanced)).toMatch('does not balance in EUR');
    expect(await callPost(header(posting, { content_hash: 'f'.repeat(64) }), entries)).toMatch('content hash does not match');
    expect(await callPost(header(posting), [entries[0]])).toMatch('at least two entries');
    expect(await callPost(header(posting), [entries[0], { ...entries[1]!, amount_minor: '-1e3' }])).toMatch('malformed entry');
    expect(await callPost(header(posting, { kind: 'gift' }), entries)).toMatch('unknown kind');
    const [n] =
      await owner.sql`select count(*)::int as n from ledger_transactions where idempotency_key = ${posting.idempotencyKey}`;
    expect(n!.n).toBe(0);
  });

  it('A21 a reused idempotency key: the same content answers the first id, other content is a conflict; an id already posted is refused', async () => {
    const posting = payment(unique('a21'), unique('pi'));
    const first = await callPost(header(posting), entriesOf(posting));
    expect(first).toMatchObject({ status: 'posted' });
    const again = await callPost(header(posting), entriesOf(posting));
    expect(again).toEqual(
      expect.objectContaining({ status: 'replayed', transaction_id: (first as { transaction_id: string }).transaction_id }),
    );
    const other = buildPosting({
      kind: 'payment',
      provider: posting.provider,
      providerEventId: 'evt_x',
      paymentReference: posting.paymentReference,
      amountMinor: '1',
      currency: 'EUR',
    });
    expect(await callPost(header(other, { content_hash: undefined }), entriesOf(other))).toMatchObject({ status: 'conflict' });
    const fresh = payment(unique('a21'), unique('pi'));
    const reuseId = await callPost(header(fresh, { id: (first as { transaction_id: string }).transaction_id }), entriesOf(fresh));
    expect(reuseId).toMatch('already has its entries');
    const [n] =
      await owner.sql`select count(*)::int as n from ledger_entries where transaction_id = ${(first as { transaction_id: string }).transaction_id}`;
    expect(n!.n).toBe(2);
  });

  it('A21 a refund beyond what is settled, or before its capture, is refused by the function itself', async () => {
    const old = await oldPayment();
    const refund = (amountMinor: string, ref = old.ref) =>
      buildPosting({
        kind: 'refund',
        provider: old.provider,
        providerEventId: unique('evt'),
        providerObjectId: unique('re'),
        paymentReference: ref,
        amountMinor,
        currency: 'EUR',
      });
    const early = refund('10', unique('pi'));
    expect(await callPost(header(early), entriesOf(early))).toMatchObject({ status: 'capture_not_posted' });
    const beyond = refund('1001');
    expect(await callPost(header(beyond), entriesOf(beyond))).toMatchObject({
      status: 'exceeds_settled',
      settled_minor: '1000',
      requested_minor: '1001',
    });
    const within = refund('1000');
    expect(await callPost(header(within), entriesOf(within))).toMatchObject({ status: 'posted' });
  });

  it('A21 the functions run as their owner with a pinned search_path, and only the application role may call them', async () => {
    const rows = await owner.sql<
      { name: string; definer: boolean; config: string[] | null; public_exec: boolean; app_exec: boolean }[]
    >`
      select p.proname as name, p.prosecdef as definer, p.proconfig as config,
             has_function_privilege('public', p.oid, 'EXECUTE') as public_exec,
             has_function_privilege(${new URL(TEST_APP_DATABASE_URL).username}, p.oid, 'EXECUTE') as app_exec
        from pg_proc p join pg_namespace n on n.oid = p.pronamespace
       where n.nspname = 'public' and p.proname = any(${LEDGER_FUNCTIONS as unknown as string[]})`;
    expect(rows.map((r) => r.name).sort()).toEqual([...LEDGER_FUNCTIONS].sort());
    const [hash] = await app.sql`select public.apipay_ledger_content_hash('k', 'payment', 'p', 'r', '[]'::jsonb) as h`; // READ_FUNCTIONS: the ledger check's
    expect(hash!.h).toMatch(/^[0-9a-f]{64}$/);
    expect(await attempt(app.sql`select public.apipay_ledger_same_content('x', 'payment', 'r', '[]'::jsonb)`)).toMatch(
      'permission denied for function',
    );
    for (const row of rows) {
      expect(row).toMatchObject({ definer: true, public_exec: false, app_exec: true });
      expect(row.config).toContain('search_path=pg_catalog, public, pg_temp');
    }
  });

  it('A21 the content hash the database computes is the one the application computes, for any accounts', async () => {
    const text = fc
      .string({ unit: 'binary', minLength: 1, maxLength: 12 })
      .filter((s) => !s.includes('\u0000') && !/\p{Cs}/u.test(s));
    await fc.assert(
      fc.asyncProperty(text, text, text, fc.bigInt({ min: 1n, max: 10n ** 15n }), async (provider, ref, account, amount) => {
        const posting: Posting = {
          idempotencyKey: `${provider}:${ref}:payment`,
          kind: 'payment',
          provider,
          paymentReference: ref,
          currency: 'EUR',
          amountMinor: amount,
          entries: [
            { account, amountMinor: amount, currency: 'EUR' },
            { account: `${account}:x`, amountMinor: -amount, currency: 'EUR' },
          ],
        };
        const [row] =
          await owner.sql`select public.apipay_ledger_content_hash(${posting.idempotencyKey}, 'payment', ${provider}, ${ref}, ${JSON.stringify(entriesOf(posting))}::jsonb) as hash`;
        expect(row!.hash).toBe(contentHash(posting));
      }),
      { numRuns: 60 },
    );
  });

  it('A21 the application does its own ledger work as the application role: postings, adjustments with their audit row, keys and people', async () => {
    const old = await oldPayment();
    const meta = {
      providerEventId: unique('evt'),
      reconciliationId: 'none',
      effectiveAt: new Date().toISOString(),
      actor: 'system',
    };
    const refund = buildPosting({
      kind: 'refund',
      provider: old.provider,
      providerEventId: meta.providerEventId,
      providerObjectId: unique('re'),
      paymentReference: old.ref,
      amountMinor: '100',
      currency: 'EUR',
    });
    const first = await postTransaction(app.db, refund, meta);
    expect(await postTransaction(app.db, refund, meta)).toMatchObject({ transactionId: first.transactionId, replayed: true }); // an activity's retry
    await owner.db.insert(reconciliations).values({
      id: `reconcile:${old.provider}:${unique('evt')}`,
      provider: old.provider,
      providerEventId: unique('evt'),
      eventType: 'payment.succeeded',
      paymentReference: old.ref,
      amountMinor: 1000n,
      currency: 'EUR',
      effectiveAt: new Date(),
      state: 'applied',
      acknowledgedAt: new Date(),
    });
    const actor = { keyId: BOOTSTRAP_KEY_ID, name: 'a21', role: 'admin', requestId: null, via: 'api' as const };
    const input = {
      provider: old.provider,
      paymentReference: old.ref,
      amountMinor: '-50',
      currency: 'EUR',
      operator: 'a21',
      reason: 'a21 correction',
      actor,
      idempotencyKey: unique('adj'),
    };
    const adjusted = await postAdjustment(app.db, input);
    expect(adjusted).toMatchObject({ replayed: false, adjustment: { amountMinor: -50n, reason: 'a21 correction' } });
    expect(await postAdjustment(app.db, input)).toMatchObject({ replayed: true, adjustment: { id: adjusted.adjustment.id } });
    await expect(postAdjustment(app.db, { ...input, amountMinor: '-51' })).rejects.toThrow(AdjustmentRefusedError);
    await expect(postAdjustment(app.db, { ...input, idempotencyKey: unique('adj'), amountMinor: '-900' })).rejects.toThrow(
      /settled/,
    );
    const [audit] =
      await owner.sql`select after from audit_events where action = 'ledger.adjust' and target_id = ${adjusted.adjustment.id}`;
    expect(audit!.after).toMatchObject({ amount_minor: '-50', ledger_transaction_id: adjusted.adjustment.ledgerTransactionId });
    const keys = createApiKeyService({ db: app.db });
    const person = unique('a21-person');
    const { key } = await keys.create(
      { keyId: BOOTSTRAP_KEY_ID, name: 'bootstrap', role: 'admin', merchantAccount: null },
      { name: unique('a21-key'), role: 'admin', merchantAccount: null, person },
    );
    const [created] =
      await owner.sql`select p.name, a.after from api_keys k join principals p on p.id = k.principal_id join audit_events a on a.target_id = k.id and a.action = 'api_key.create' where k.id = ${key.id}`;
    expect(created).toMatchObject({ name: person, after: { person, person_created: true, principal_id: key.principalId } });
    expect(JSON.stringify(created!.after)).not.toMatch(/secret|hash/);
    const revoked = await keys.revoke(
      { keyId: BOOTSTRAP_KEY_ID, name: 'bootstrap', role: 'admin', merchantAccount: null },
      key.id,
    );
    expect(revoked.revokedAt).not.toBeNull();
    expect(
      (await keys.revoke({ keyId: BOOTSTRAP_KEY_ID, name: 'bootstrap', role: 'admin', merchantAccount: null }, key.id)).revokedAt,
    ).toEqual(revoked.revokedAt);
  });

  it('A21 a posting hashed before migration 0029 (entries sorted by the locale) is still a replay, not a conflict', async () => {
    const provider = unique('a21');
    const posting = buildPosting({
      kind: 'provisional',
      provider,
      providerEventId: unique('evt'),
      paymentReference: unique('pi'),
      amountMinor: '700',
      currency: 'EUR',
    });
    const legacy = createHash('sha256')
      .update(
        JSON.stringify({
          key: posting.idempotencyKey,
          kind: posting.kind,
          payment: `${provider}:${posting.paymentReference}`,
          entries: posting.entries
            .map((e) => [e.account, e.currency, e.amountMinor.toString()])
            .sort((a, b) => a.join('|').localeCompare(b.join('|'))),
        }),
      )
      .digest('hex');
    expect(legacy).not.toBe(contentHash(posting)); // provisional_clearing:… and provisional:… sort differently by locale and by byte
    const id = unique('ltx_legacy');
    await owner.sql.begin(async (tx) => {
      await tx`insert into ledger_transactions (id, idempotency_key, content_hash, kind, payment_reference, effective_at, metadata) values (${id}, ${posting.idempotencyKey}, ${legacy}, 'provisional', ${posting.paymentReference}, now(), ${JSON.stringify({ provider, providerEventId: 'evt_legacy' })}::jsonb)`;
      await tx`insert into ledger_entries ${tx(posting.entries.map((e) => ({ transaction_id: id, account: e.account, amount_minor: e.amountMinor.toString(), currency: e.currency })))}`;
    });
    const meta = {
      providerEventId: 'evt_legacy',
      reconciliationId: 'none',
      effectiveAt: new Date().toISOString(),
      actor: 'system',
    };
    expect(await postTransaction(app.db, posting, meta)).toMatchObject({ transactionId: id, replayed: true });
  });
});
