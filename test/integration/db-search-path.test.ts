// A10 the database defends itself (issue 23, item 6): connected as the application role, a temporary table named
// like a ledger table cannot shadow the one the balance trigger reads, because the role may create no temporary
// table and no object in the database or the public schema, and every function of the schema pins its
// search_path and names its tables with their schema.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { attempt, roleDatabases } from '../helpers/role-databases.js';

const { app, owner } = roleDatabases({ app: 1, owner: 1 });

describe('A10 the database defends itself against the application role', () => {
  it('A10 a temporary ledger_entries cannot shadow the balance check: the unbalanced transaction does not commit', async () => {
    const id = `ltx_a10_${randomUUID().slice(0, 8)}`;
    const outcome = await attempt(
      app.sql.begin(async (tx) => {
        await tx`create temp table ledger_entries (transaction_id text, account text, amount_minor bigint, currency text) on commit drop`;
        await tx`insert into public.ledger_transactions (id, idempotency_key, content_hash, kind, payment_reference, effective_at) values (${id}, ${id}, 'h', 'payment', 'pi_a10', now())`;
        await tx`insert into public.ledger_entries (transaction_id, account, amount_minor, currency) values (${id}, 'assets:cash', 900000000, 'GBP')`;
      }),
    );
    expect(outcome).not.toBe('ok');
    const [row] = await owner.sql`select count(*)::int as n from public.ledger_entries where transaction_id = ${id}`;
    expect(row!.n).toBe(0);
  });

  it('A10 even with no temporary table, the balance trigger still refuses an unbalanced transaction', async () => {
    // A21: the application role may no longer insert ledger rows at all; the trigger still holds for the owner.
    const id = `ltx_a10_${randomUUID().slice(0, 8)}`;
    const outcome = await attempt(
      owner.sql.begin(async (tx) => {
        await tx`insert into public.ledger_transactions (id, idempotency_key, content_hash, kind, payment_reference, effective_at) values (${id}, ${id}, 'h', 'payment', 'pi_a10', now())`;
        await tx`insert into public.ledger_entries (transaction_id, account, amount_minor, currency) values (${id}, 'assets:cash', 5, 'EUR')`;
      }),
    );
    expect(outcome).toMatch('does not balance');
  });

  it('A10 the application role has neither TEMP nor CREATE on the database, nor CREATE on the public schema', async () => {
    const [p] = await app.sql`select has_database_privilege(current_database(), 'TEMP') as temp,
      has_database_privilege(current_database(), 'CREATE') as create_db,
      has_schema_privilege('public', 'CREATE') as create_public`;
    expect(p).toEqual({ temp: false, create_db: false, create_public: false });
    expect(await attempt(app.sql`create temp table a10_probe (x int)`)).toMatch('permission denied');
    expect(await attempt(app.sql`create table public.a10_probe (x int)`)).toMatch('permission denied');
    expect(await attempt(app.sql`create schema a10_probe`)).toMatch('permission denied');
    expect(await attempt(app.sql`create function public.a10_probe() returns int language sql as 'select 1'`)).toMatch(
      'permission denied',
    );
  });

  it('A10 every function of the public schema pins its search_path', async () => {
    const loose = await owner.sql<{ name: string }[]>`
      select p.proname as name from pg_proc p join pg_namespace n on n.oid = p.pronamespace
       where n.nspname = 'public'
         and not exists (select 1 from unnest(coalesce(p.proconfig, '{}')) c where c like 'search_path=%')
       order by 1`;
    expect(loose.map((r) => r.name)).toEqual([]);
  });

  it('A10 the trigger functions that read tables name them with their schema', async () => {
    const rows = await owner.sql<{ name: string; body: string }[]>`
      select p.proname as name, p.prosrc as body from pg_proc p join pg_namespace n on n.oid = p.pronamespace
       where n.nspname = 'public' and p.prosrc ~* '\\m(from|join|into|update)\\s'`;
    for (const { name, body } of rows) {
      const unqualified = [...body.matchAll(/\b(?:from|join|update)\s+([a-z_][a-z0-9_.]*)/gi)]
        .map((m) => m[1]!)
        .filter((t) => !t.includes('.') && t.toLowerCase() !== 'set'); // ON CONFLICT … DO UPDATE SET names no table
      expect({ name, unqualified }).toEqual({ name, unqualified: [] });
    }
  });
});
