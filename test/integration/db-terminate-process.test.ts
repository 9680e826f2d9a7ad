// R17: the real API process (src/workers/api.ts) survives PostgreSQL dropping its connections under load: its
// backends are terminated (pg_terminate_backend, found by the process's application_name) over and over while
// signed webhooks arrive. It must not die (the postgres.js nextWrite crash was an uncaught exception), every webhook
// it acknowledged must be stored, and once the terminations stop it is ready and acknowledges again.
import { type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { TEST_DATABASE_URL } from '../helpers/env.js';
import { storedFor, stripeEvent, stripeRequest } from '../helpers/inbound.js';
import { startApiProcess, stopChild } from '../helpers/processes.js';

const provider = `r17-${randomUUID().slice(0, 6)}`;
const appName = `r17-victim-${randomUUID().slice(0, 8)}`;
let database: Database;
let child: ChildProcess;
let url: string;
let stderr: () => string;

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 2 });
  // PGAPPNAME: postgres.js's application_name, how the test finds this process's backends.
  const api = await startApiProcess({ provider, env: { PGAPPNAME: appName } });
  ({ child, stderr } = api);
  url = api.urls['api listening']!;
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
  return { id: event.id, status: answer?.status ?? 0, body: answer && answer.status !== 200 ? await answer.text() : '' };
};

describe('R17 a process whose database connections are terminated under load', () => {
  it('stays alive, loses no acknowledged webhook, and is ready again afterwards', { timeout: 120_000 }, async () => {
    let terminated = 0;
    const answers: { id: string; status: number; body: string }[] = [];
    for (let round = 0; round < 30; round += 1) {
      const batch = Promise.all(Array.from({ length: 6 }, send));
      await new Promise((r) => setTimeout(r, round % 3 === 0 ? 0 : 15 * (round % 12)));
      terminated += await terminateBackends();
      answers.push(...(await batch));
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(terminated, 'the test terminated backends of the process').toBeGreaterThan(0);
    expect(child.exitCode, stderr()).toBeNull();
    expect(stderr()).not.toMatch(/uncaught|Cannot read properties of null/i);

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
    expect(
      after.map((a) => a.status),
      after.map((a) => a.body).join(' | '),
    ).toEqual(Array(5).fill(200));
    expect(child.exitCode).toBeNull();
  });
});
