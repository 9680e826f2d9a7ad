// Benchmarks and the drill write to their own database (apipay_bench), created and migrated on first use, so
// their parked or terminated rows never show up in the demo's `apipay` database.
import postgres from 'postgres';
import { runMigrations } from '../../src/db/migrate.js';

export const BENCH_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5433/apipay_bench';

export async function ensureBenchDatabase(url = BENCH_DATABASE_URL): Promise<string> {
  const target = new URL(url);
  const name = target.pathname.slice(1);
  const admin = postgres({
    host: target.hostname,
    port: Number(target.port),
    username: target.username || 'postgres',
    database: 'postgres',
    onnotice: () => {},
  });
  try {
    const exists = await admin`select 1 from pg_database where datname = ${name}`;
    if (exists.length === 0) await admin.unsafe(`create database "${name.replaceAll('"', '')}"`);
  } finally {
    await admin.end();
  }
  await runMigrations(url);
  return url;
}

/**
 * A bench run's own rows out of the bench database at its end: its endpoints' deliveries and attempts, its events
 * and its endpoints (audit rows stay: the audit log is append-only). Without it the tables grew by every run
 * (1.2 M deliveries by 7 Dec), and each run measured a bigger database than the one before it.
 */
export async function removeBenchRows(sql: postgres.Sql, endpointIds: string[], merchantAccounts: string[]) {
  if (!endpointIds.length) return;
  // Locking the endpoints and their deliveries first holds off a delivery or attempt written for them meanwhile
  // (its foreign key's FOR KEY SHARE waits), so the deletes below see every row they must remove.
  await sql.begin(async (tx) => {
    await tx`select id from webhook_endpoints where id in ${tx(endpointIds)} order by id for update`;
    await tx`select id from deliveries where endpoint_id in ${tx(endpointIds)} for update`;
    await tx`delete from delivery_attempts where delivery_id in (select id from deliveries where endpoint_id in ${tx(endpointIds)})`;
    await tx`delete from deliveries where endpoint_id in ${tx(endpointIds)}`;
    await tx`delete from events where merchant_account in ${tx(merchantAccounts)}`;
    await tx`delete from endpoint_status_changes where endpoint_id in ${tx(endpointIds)}`;
    await tx`delete from webhook_endpoints where id in ${tx(endpointIds)}`;
  });
}
