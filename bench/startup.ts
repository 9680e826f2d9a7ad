// Item 1 of issue 22: start-to-ready time and resident memory of each process, run through tsx (src/) against the
// release build (dist/, prebuilt workflow bundle), one after the other against the running stack. `npm run build`
// first; `npm run bench:startup`. Prints one table (one run; docs/benchmarks.md "Start-up: tsx against dist").
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { APPS, ensureNamespace, READY_PORT_VARIABLE, rssMiB, startApp } from './lib/app-start.js';

const ROOT = join(import.meta.dirname, '..');
if (!existsSync(join(ROOT, 'dist/workers/api.js'))) throw new Error('no dist/: run npm run build first');
const TEMPORAL_ADDRESS = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
const NAMESPACE = process.env.BENCH_NAMESPACE ?? 'apipay-bench-startup';
await ensureNamespace(TEMPORAL_ADDRESS, NAMESPACE);

const env: Record<string, string> = {
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '',
  NODE_ENV: 'production',
  LOG_LEVEL: 'warn',
  APIPAY_PROFILE: 'config/example.yaml',
  DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://apipay_app@127.0.0.1:5433/apipay',
  TEMPORAL_ADDRESS,
  TEMPORAL_NAMESPACE: NAMESPACE,
  KAFKA_BROKERS: process.env.KAFKA_BROKERS ?? '127.0.0.1:9092',
  ADMIN_TOKEN: 'bench-startup-admin-token-0123',
  SECRETS_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
  SANDBOX_STRIPE_WEBHOOK_SECRET: 'whsec_bench_startup',
  SANDBOX_HMAC_WEBHOOK_SECRET: 'bench-startup-hmac-secret',
  API_PORT: '13960',
  WORKER_METRICS_PORT: '13961',
  DISPATCHER_METRICS_PORT: '13962',
};
const MODES = {
  tsx: (app: string) => ['--import', 'tsx', `src/workers/${app}.ts`],
  dist: (app: string) => ['--enable-source-maps', `dist/workers/${app}.js`],
};

const rows: string[] = [];
for (const [mode, args] of Object.entries(MODES)) {
  for (const app of APPS) {
    const port = Number(env[READY_PORT_VARIABLE[app]]);
    const started = await startApp({ command: process.execPath, args: args(app), cwd: ROOT, env, port });
    await new Promise((r) => setTimeout(r, 5_000));
    const settled = rssMiB(started.child.pid!);
    await started.stop();
    rows.push(`| ${app} | ${mode} | ${(started.readyMs / 1000).toFixed(2)} s | ${started.rssMiB} MiB | ${settled} MiB |`);
    console.error(rows.at(-1));
  }
}
console.log(
  ['| process | run as | start to ready | RSS at ready | RSS 5 s later |', '|---|---|---|---|---|', ...rows].join('\n'),
);
