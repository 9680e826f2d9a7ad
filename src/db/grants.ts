// A6 least privilege: what the application role may do to each table, applied after every migration by the
// owner (src/db/migrate.ts). The processes connect as that role (DATABASE_URL); migrations as the owner
// (MIGRATION_DATABASE_URL). No table gets TRUNCATE, REFERENCES or TRIGGER; the append-only ones get no UPDATE or
// DELETE (beyond the triggers of migrations 0001 and 0009, which stop the owner too), except the one column a
// process must set; A21: the ledger, keys, people and a reconciliation's money are written only through the
// SECURITY DEFINER functions of migration 0029 (LEDGER_FUNCTIONS). The role has no TEMP and no CREATE anywhere (A10). Re-running converges: everything is revoked and granted again in one transaction.
import type postgres from 'postgres';

export const DEFAULT_APP_ROLE = 'apipay_app';

const READ_APPEND = 'SELECT, INSERT';
const READ_WRITE = 'SELECT, INSERT, UPDATE';

/** Every table of the schema, by name. A table missing here gets READ_WRITE + DELETE and fails test/integration/db-roles. */
export const TABLE_GRANTS: Record<string, string> = {
  // Immutable: the registry (I5), receipts (I2; only the sweep's marker changes), the ledger (I9), the audit rows.
  provider_event_registry: READ_APPEND,
  webhook_receipts: `${READ_APPEND}, UPDATE (workflow_started_at)`,
  // A21: the ledger, keys and people are written only by the functions of migration 0029 (LEDGER_FUNCTIONS).
  ledger_transactions: 'SELECT',
  ledger_entries: 'SELECT',
  operator_resolutions: READ_APPEND,
  ledger_adjustments: 'SELECT', // L3: an operator's correction is audited like a resolution (apipay_post_adjustment)
  reconciliation_transitions: READ_APPEND,
  resolution_proposals: `${READ_APPEND}, UPDATE (closed, closed_by, closed_by_key, closed_via, closed_at)`, // A5: closed once
  adjustment_proposals: `${READ_APPEND}, UPDATE (closed, closed_by, closed_by_key, closed_at, adjustment_id)`, // A5 (L3): closed once
  api_keys: 'SELECT', // A21: created and revoked by apipay_create_api_key and apipay_revoke_api_key
  portal_links: `${READ_APPEND}, UPDATE (used_at, revoked_at, revoked_by)`, // A15: used once, revoked once
  console_sessions: `${READ_APPEND}, UPDATE (ended_at, ended_reason)`, // A16: ended, never reopened
  principals: 'SELECT', // A12: the people keys belong to, never edited; A21: created by apipay_create_principal
  proposal_approvals: READ_APPEND, // A27: a first IdP approval, never edited or withdrawn
  audit_events: READ_APPEND, // A3: who changed what, never edited
  events: `${READ_APPEND}, UPDATE (body, expunged_at, expunge_reason)`, // O19: only the body can go (expunge, retention)
  quarantined_messages: READ_APPEND,
  endpoint_status_changes: READ_APPEND, // M4: the feed of disables and enables
  // Mutable projections and state.
  // A21: the event's money and the provider's answer are written by apipay_record_reconciliation only; an
  // operator's resolution sets the state it moves to and the transaction it posted.
  reconciliations: 'SELECT, UPDATE (state, reason, ledger_transaction_id, updated_at)',
  webhook_endpoints: READ_WRITE, // deleted softly: no DELETE
  endpoint_secrets: `${READ_WRITE}, DELETE`, // a deleted endpoint's secrets are destroyed
  deliveries: READ_WRITE,
  delivery_attempts: READ_WRITE,
  smoke_runs: READ_WRITE,
  outbox_events: `${READ_APPEND}, UPDATE (published_at)`, // M1: only the relay's mark after Kafka's ack
  workflow_step_results: `${READ_APPEND}, DELETE`, // R13: the first durable answer of a step, pruned after a week
  backlog_samples: `SELECT, INSERT, DELETE`, // C12: one sample a minute, never edited, pruned after 8 days
  auth_failure_buckets: `${READ_WRITE}, DELETE`, // A23: the throttles' shared buckets, pruned once full again
};

/** The tables test/integration/db-roles.test.ts proves refuse UPDATE, DELETE and TRUNCATE by the application role. */
export const IMMUTABLE_TABLES = ['provider_event_registry', 'webhook_receipts', 'ledger_transactions', 'ledger_entries', 'operator_resolutions', 'reconciliation_transitions', 'ledger_adjustments', 'audit_events', 'principals', 'api_keys', 'proposal_approvals'] as const;

/** A21: tables the application role may read and never write: only LEDGER_FUNCTIONS write them. */
export const FUNCTION_WRITTEN_TABLES = ['ledger_transactions', 'ledger_entries', 'ledger_adjustments', 'api_keys', 'principals'] as const;

/** A21 (migration 0029): the SECURITY DEFINER functions the application role writes the ledger, keys and people with. */
export const LEDGER_FUNCTIONS = [
  'apipay_post_ledger_transaction',
  'apipay_post_adjustment',
  'apipay_create_principal',
  'apipay_create_api_key',
  'apipay_revoke_api_key',
  'apipay_record_reconciliation',
] as const;

/** A21: functions the role may call that write nothing (the ledger check recomputes content hashes with it). */
export const READ_FUNCTIONS = ['apipay_ledger_content_hash'] as const;

const UNLISTED = `${READ_WRITE}, DELETE`;
const ident = (name: string) => {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`not a plain SQL identifier: ${JSON.stringify(name)}`);
  return `"${name}"`;
};

/** Creates the login role if missing (harmless when it exists or another migration created it meanwhile). */
export async function ensureRole(sql: postgres.Sql, role: string): Promise<void> {
  const [exists] = await sql`select 1 from pg_roles where rolname = ${role}`;
  if (exists) return;
  try {
    await sql.unsafe(`CREATE ROLE ${ident(role)} LOGIN`);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === '42710' || code === '23505') return; // created concurrently
    if (code === '42501') throw new Error(`role ${role} does not exist and this user may not create it: run "CREATE ROLE ${role} LOGIN PASSWORD '…'" as a superuser`);
    throw error;
  }
}

/** Applies TABLE_GRANTS to `role`; returns the tables that had no entry. Refuses the connecting user and superusers. */
export async function applyGrants(sql: postgres.Sql, role: string): Promise<{ unlisted: string[] }> {
  const [target] = await sql<{ rolsuper: boolean; me: boolean }[]>`select rolsuper, rolname = current_user as me from pg_roles where rolname = ${role}`;
  if (!target) throw new Error(`role ${role} does not exist`);
  if (target.rolsuper || target.me) throw new Error(`refusing to restrict ${role}: it is a superuser or the migration user itself; the processes need a role of their own`);
  const tables = (await sql<{ tablename: string }[]>`select tablename from pg_tables where schemaname = 'public' order by tablename`).map((r) => r.tablename);
  const unlisted = tables.filter((t) => !(t in TABLE_GRANTS));
  const [{ database } = { database: '' }] = await sql<{ database: string }[]>`select current_database() as database`;
  const r = ident(role);
  await sql.begin(async (tx) => {
    await tx.unsafe(`REVOKE ALL ON ALL TABLES IN SCHEMA public FROM ${r}`);
    await tx.unsafe(`REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM ${r}`);
    await tx.unsafe(`GRANT USAGE ON SCHEMA public TO ${r}`);
    for (const table of tables) await tx.unsafe(`GRANT ${TABLE_GRANTS[table] ?? UNLISTED} ON TABLE public.${ident(table)} TO ${r}`);
    await tx.unsafe(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ${r}`);
    // A21: the only way the role writes the ledger, keys and people (EXECUTE is no longer PUBLIC's: migration 0029).
    await tx.unsafe(`REVOKE ALL ON ALL FUNCTIONS IN SCHEMA public FROM ${r}`);
    for (const fn of [...LEDGER_FUNCTIONS, ...READ_FUNCTIONS]) await tx.unsafe(`GRANT EXECUTE ON FUNCTION public.${ident(fn)} TO ${r}`);
    // A10: no temporary table can shadow a table a trigger reads, and no object of the role's own can stand in for
    // one of the schema's. TEMP is PUBLIC's by default, so it is taken from PUBLIC (the owner keeps what it has).
    const db = `"${database.replace(/"/g, '""')}"`; // any database name, quoted
    await tx.unsafe(`REVOKE TEMPORARY ON DATABASE ${db} FROM PUBLIC`);
    await tx.unsafe(`REVOKE TEMPORARY, CREATE ON DATABASE ${db} FROM ${r}`);
    await tx.unsafe(`GRANT CONNECT ON DATABASE ${db} TO ${r}`);
    await tx.unsafe(`REVOKE CREATE ON SCHEMA public FROM PUBLIC`);
    await tx.unsafe(`REVOKE CREATE ON SCHEMA public FROM ${r}`);
  });
  return { unlisted };
}
