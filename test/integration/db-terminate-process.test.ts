// R17: the real API process (src/workers/api.ts) survives PostgreSQL dropping its connections under load: its
// backends are terminated (pg_terminate_backend, found by the process's application_name) over and over while
// signed webhooks arrive. It must not die (the postgres.js nextWrite crash was an uncaught exception), every webhook
// it acknowledged must be stored, and once the terminations stop it is ready and acknowledges again.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { TEST_ADMIN_TOKEN, TEST_DATABASE_URL, TEST_SECRETS_KEY } from '../helpers/env.js';
import { storedFor, stripeEvent, stripeRequest } from '../helpers/inbound.js';
import { TEST_PROVIDER_SECRETS } from '../helpers/profile.js';
import { stopChild } from '../helpers/processes.js';

const provider = `r17-${randomUUID().slice(0, 6)}`;
const appName = `r17-victim-${randomUUID().slice(0, 8)}`;
let database: Database;
let child: ChildProcess;
let url: string;
let stderr = '';

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 2 });
  const profile = parse(readFileSync('config/example.yaml', 'utf8')) as { inbound: { providers: unknown } };
  profile.inbound.providers = {
    [provider]: {
      scheme: 'stripe',
      secret_ref: 'env:SANDBOX_STRIPE_WEBHOOK_SECRET',
      tolerance_seconds: 300,
      api_base_url: 'http://127.0.0.1:4100/stripe',
    },
  };
  const path = join(mkdtempSync(join(tmpdir(), 'apipay-r17-')), 'profile.yaml');
  writeFileSync(path, stringify(profile));
  child = spawn(process.execPath, ['--import', 'tsx', 'src/workers/api.ts'], {
    env: {
      ...process.env,
      ...TEST_PROVIDER_SECRETS,
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      APIPAY_PROFILE: path,
      DATABASE_URL: TEST_DATABASE_URL,
      DATABASE_POOL_MAX: '4',
      PGAPPNAME: appName, // postgres.js's application_name: how the test finds this process's backends
      TEMPORAL_ADDRESS: '127.0.0.1:1',
      KAFKA_BROKERS: '127.0.0.1:1',
      API_PORT: '0',
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY.toString('base64'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the API process did not start in time: ${stderr}`)), 60_000);
    child.once('exit', (code) => reject(new Error(`the API process exited with ${code}: ${stderr}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'api listening') {
          clearTimeout(timer);
          resolve(entry.url!);
        }
      } catch {
        // not a log line
      }
    });
  });
}, 90_000);

afterAll(async () => {
  await stopChild(child);
  await database?.close();
});

const terminateBackends = async () => {
  const rows = await database.sql<{ ok: boolean }[]>`
    select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = ${appName} and pid <> pg_backend_pid()`;
  return rows.length;
};

const send = async () => {
  const event = stripeEvent();
  const answer = await fetch(`${url}/webhooks/${provider}`, stripeRequest(event.body) as RequestInit).catch(() => null);
  return { id: event.id, status: answer?.status ?? 0 };
};

describe('R17 a process whose database connections are terminated under load', () => {
  it('stays alive, loses no acknowledged webhook, and is ready again afterwards', { timeout: 120_000 }, async () => {
    let terminated = 0;
    const answers: { id: string; status: number }[] = [];
    for (let round = 0; round < 30; round += 1) {
      const batch = Promise.all(Array.from({ length: 6 }, send));
      await new Promise((r) => setTimeout(r, round % 3 === 0 ? 0 : 15 * (round % 12)));
      terminated += await terminateBackends();
      answers.push(...(await batch));
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(terminated, 'the test terminated backends of the process').toBeGreaterThan(0);
    expect(child.exitCode, stderr).toBeNull();
    expect(stderr).not.toMatch(/uncaught|Cannot read properties of null/i);

    // acknowledged means stored (R5): a 200 during the terminations is a committed receipt
    const acknowledged = answers.filter((a) => a.status === 200);
    for (const a of acknowledged)
      expect(await storedFor(database.db, provider, a.id), a.id).toMatchObject({ registry: 1, receipts: 1 });
    // anything else was a 503 the provider retries, never a 500
    expect(answers.filter((a) => a.status !== 200 && a.status !== 503)).toEqual([]);

    // once PostgreSQL keeps its connections, the process is ready and acknowledges again
    const deadline = Date.now() + 30_000;
    while (
      (await fetch(`${url}/readyz`).then(
        (r) => r.status,
        () => 0,
      )) !== 200
    ) {
      expect(Date.now(), 'ready again within 30 s').toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 250));
    }
    const after = await Promise.all(Array.from({ length: 5 }, send));
    expect(after.map((a) => a.status)).toEqual(Array(5).fill(200));
    expect(child.exitCode).toBeNull();
  });
});
