// A31 on ApiPay's own Temporal server (APIPAY_TEMPORAL=server): the real worker process under
// `inbound.resolution_via_temporal: idp`, pointed at the PUBLIC frontend with the service client's credentials
// (TEMPORAL_OIDC_TOKEN_URL, client credentials at the stack's Keycloak), passes its start-up probe (a tokenless call
// there is refused) and polls its task queues with the service token: the server lists it among the queue's
// pollers. Its refusal against a frontend that answers tokenless calls: test/integration/startup-failures.test.ts.
// Like trace.test.ts, the process gets a database and a namespace of its own: its sweeps read every row they see, and
// it polls the real task-queue names.
// Skipped, saying so, outside server mode (APIPAY_TEMPORAL_AUTHZ_ADDRESS unset).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureNamespace } from '../../bench/lib/app-start.js';
import { TASK_QUEUES } from '../../src/shared/task-queues.js';
import { KAFKA_BROKERS, TEMPORAL_ADDRESS, TEST_ADMIN_TOKEN, TEST_SECRETS_KEY } from '../helpers/env.js';
import { KEYCLOAK_ENABLED, KEYCLOAK_ISSUER } from '../helpers/idp.js';
import { privateDatabase } from '../helpers/private-database.js';
import { waitFor } from '../helpers/wait.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const ADDRESS = process.env.APIPAY_TEMPORAL_AUTHZ_ADDRESS ?? '';
const NAMESPACE = 'apipay-tsrv-worker';
const store = privateDatabase('tsrv_worker');
const SERVER_MODE = Boolean(ADDRESS) && KEYCLOAK_ENABLED;
if (!SERVER_MODE)
  console.warn(
    "[temporal-server-worker] SKIPPED: needs ApiPay's Temporal server (APIPAY_TEMPORAL=server) and the stack's Keycloak; set APIPAY_TEMPORAL_AUTHZ_ADDRESS to its public frontend (docs/testing.md, 'Temporal server mode')",
  );

const SERVICE_CLIENT = 'apipay-temporal-service';
const serviceSecret = () =>
  (
    JSON.parse(readFileSync(join(ROOT, 'scripts/stack/keycloak-realm.json'), 'utf8')) as {
      clients: Array<{ clientId: string; secret?: string }>;
    }
  ).clients.find((c) => c.clientId === SERVICE_CLIENT)!.secret!;

let worker: ChildProcess | undefined;

describe.skipIf(!SERVER_MODE)('A31 the worker on the public frontend (server mode only)', () => {
  beforeAll(async () => {
    await store.create({ migrate: true });
    await ensureNamespace(TEMPORAL_ADDRESS, NAMESPACE); // the internal frontend: the system's call
  });
  afterAll(async () => {
    if (worker && worker.exitCode === null) {
      const exited = new Promise((resolve) => worker!.once('exit', resolve));
      worker.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 20_000))]);
      if (worker.exitCode === null) worker.kill('SIGKILL');
    }
    await store.drop();
  });

  it(
    'A31 under resolution_via_temporal: idp the worker starts against the authorizing frontend and polls with the service token',
    { timeout: 180_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'apipay-tsrv-'));
      const profile = parse(readFileSync(join(ROOT, 'config/demo.yaml'), 'utf8')) as {
        idp: Record<string, unknown>;
        inbound: Record<string, unknown>;
      };
      profile.inbound.resolution_via_temporal = 'idp';
      profile.idp.issuer = KEYCLOAK_ISSUER;
      writeFileSync(join(dir, 'profile.yaml'), stringify(profile));
      let output = '';
      worker = spawn(process.execPath, ['--import', 'tsx', 'src/workers/worker.ts'], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          NODE_ENV: 'test',
          LOG_LEVEL: 'info',
          APIPAY_PROFILE: join(dir, 'profile.yaml'),
          DATABASE_URL: store.appUrl,
          TEMPORAL_NAMESPACE: NAMESPACE,
          KAFKA_BROKERS: KAFKA_BROKERS.join(','),
          ADMIN_TOKEN: TEST_ADMIN_TOKEN,
          SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY.toString('base64'),
          SANDBOX_STRIPE_WEBHOOK_SECRET: 'whsec_startup_test',
          SANDBOX_HMAC_WEBHOOK_SECRET: 'startup-test-hmac-secret',
          WORKER_METRICS_PORT: '0',
          TEMPORAL_ADDRESS: ADDRESS,
          TEMPORAL_PUBLIC_ADDRESS: ADDRESS,
          TEMPORAL_OIDC_TOKEN_URL: `${KEYCLOAK_ISSUER}/protocol/openid-connect/token`,
          TEMPORAL_OIDC_CLIENT_ID: SERVICE_CLIENT,
          TEMPORAL_OIDC_CLIENT_SECRET: serviceSecret(),
        },
      });
      worker.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      worker.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      await waitFor(
        async () => {
          if (worker!.exitCode !== null) throw new Error(`the worker exited ${worker!.exitCode}: ${output.slice(-2000)}`);
          return output.includes('worker running');
        },
        120_000,
        'worker running',
      );
      expect(output).not.toContain(serviceSecret()); // the secret is never logged
      // The server saw the worker's polls on the public frontend, made with the service token.
      const token = (await (
        await fetch(`${KEYCLOAK_ISSUER}/protocol/openid-connect/token`, {
          method: 'POST',
          body: new URLSearchParams({
            grant_type: 'client_credentials',
            client_id: SERVICE_CLIENT,
            client_secret: serviceSecret(),
          }),
        })
      ).json()) as { access_token: string };
      const connection = await Connection.connect({
        address: ADDRESS,
        metadata: { authorization: `Bearer ${token.access_token}` },
      });
      try {
        await waitFor(
          async () => {
            const queue = await connection.workflowService.describeTaskQueue({
              namespace: NAMESPACE,
              taskQueue: { name: TASK_QUEUES.reconciliation },
              taskQueueType: 1, // workflow tasks
            });
            return (queue.pollers ?? []).some((p) => (p.identity ?? '').includes(String(worker!.pid)));
          },
          60_000,
          'the worker among the pollers',
        );
      } finally {
        await connection.close();
      }
      expect(worker.exitCode).toBeNull();
    },
  );
});
