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
