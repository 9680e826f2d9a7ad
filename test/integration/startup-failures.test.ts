// R9 on the real processes (tsx): a taken port, an unreachable database and a bad secret each stop the api, worker
// and dispatcher with ONE stderr line naming the process, the port or variable and the fix, and a non-zero exit.
// A31: so does a worker told to trust stamped Temporal identities when its Temporal server stamps none.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KAFKA_BROKERS, TEMPORAL_ADDRESS, TEST_ADMIN_TOKEN, TEST_DATABASE_URL, TEST_SECRETS_KEY } from '../helpers/env.js';

const ROOT = new URL('../../', import.meta.url).pathname;
let taken: Server;
let takenPort: number;

beforeAll(async () => {
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  takenPort = (taken.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => taken.close(() => resolve())));

function run(processName: string, overrides: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    NODE_ENV: 'test',
    LOG_LEVEL: 'error',
    DATABASE_URL: TEST_DATABASE_URL,
    TEMPORAL_ADDRESS,
    KAFKA_BROKERS: KAFKA_BROKERS.join(','),
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY.toString('base64'),
    SANDBOX_STRIPE_WEBHOOK_SECRET: 'whsec_startup_test',
    SANDBOX_HMAC_WEBHOOK_SECRET: 'startup-test-hmac-secret',
    API_PORT: '0',
    WORKER_METRICS_PORT: '0',
    DISPATCHER_METRICS_PORT: '0',
    ...overrides,
  };
  const child = spawn(process.execPath, ['--import', 'tsx', `src/workers/${processName}.ts`], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 100_000); // a process that did not stop is a failure below (tsx start-up is slow on a loaded machine)
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    }),
  );
}

const PORT_VARIABLE = { api: 'API_PORT', worker: 'WORKER_METRICS_PORT', dispatcher: 'DISPATCHER_METRICS_PORT' } as const;

describe('R9 start-up failures are one clear line', () => {
  it.each(['api', 'worker', 'dispatcher'] as const)('R9 %s: taken port, unreachable database, bad secret', { timeout: 150_000 }, async (name) => {
    const [port, database, secret] = await Promise.all([
      run(name, { [PORT_VARIABLE[name]]: String(takenPort) }),
      run(name, { DATABASE_URL: 'postgres://postgres:hunter2@127.0.0.1:1/apipay' }),
      run(name, { SECRETS_ENCRYPTION_KEY: 'too-short' }),
    ]);
    for (const result of [port, database, secret]) {
      expect(result.code, result.stderr).not.toBe(0);
      expect(result.code, result.stderr).not.toBeNull();
      const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
      expect(lines, result.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^${name}: `));
      expect(lines[0]).toContain('fix: ');
      expect(lines[0]).not.toMatch(/\n\s+at /);
    }
    expect(port.stderr).toContain(`port ${takenPort} (${PORT_VARIABLE[name]}) is already in use`);
    expect(database.stderr).toContain('cannot reach PostgreSQL at 127.0.0.1:1/apipay (DATABASE_URL)');
    expect(database.stderr).not.toContain('hunter2');
    expect(secret.stderr).toContain('invalid SECRETS_ENCRYPTION_KEY');
    expect(secret.stderr).not.toContain('too-short');
  });

  it('R9 a profile that names an unset variable is one line with the fix', async () => {
    const result = await run('api', { SANDBOX_STRIPE_WEBHOOK_SECRET: '' });
    expect(result.code).toBe(78);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^api: invalid profile .*SANDBOX_STRIPE_WEBHOOK_SECRET.*fix: /);
  });

  it('A22 a production api, worker or dispatcher whose profile sets no money limit stops with one line (exit 78)', { timeout: 150_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'apipay-limits-'));
    const profile = parse(readFileSync(join(ROOT, 'config/example.yaml'), 'utf8')) as { inbound: Record<string, unknown> };
    profile.inbound.dual_control_above = {};
    delete profile.inbound.dual_control_default_major;
    writeFileSync(join(dir, 'profile.yaml'), stringify(profile));
    const results = await Promise.all(
      (['api', 'worker', 'dispatcher'] as const).map((name) => run(name, { NODE_ENV: 'production', APIPAY_PROFILE: join(dir, 'profile.yaml') })),
    );
    for (const [i, result] of results.entries()) {
      expect(result.code, result.stderr).toBe(78);
      const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
      expect(lines, result.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^${['api', 'worker', 'dispatcher'][i]}: invalid profile .*: inbound\\.dual_control_default_major: must be set when NODE_ENV=production .*; fix: `));
    }
  });

  it('A31 a worker under resolution_via_temporal: idp refuses to start against a Temporal that answers tokenless calls (the dev server)', { timeout: 150_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'apipay-stamp-'));
    const profile = parse(readFileSync(join(ROOT, 'config/demo.yaml'), 'utf8')) as { inbound: Record<string, unknown> };
    profile.inbound.resolution_via_temporal = 'idp';
    writeFileSync(join(dir, 'profile.yaml'), stringify(profile));
    const result = await run('worker', { APIPAY_PROFILE: join(dir, 'profile.yaml') });
    expect(result.code, result.stderr).toBe(78);
    const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
    expect(lines, result.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/^worker: inbound\.resolution_via_temporal: idp needs ApiPay's Temporal server/);
    expect(lines[0]).toContain(`${TEMPORAL_ADDRESS} answered a call that carried no token`);
    expect(lines[0]).toContain('fix: ');
  });

  it('C11 a dispatcher whose topic does not exist says so (not "cannot reach Kafka"), in one line with the fix', { timeout: 150_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'apipay-topic-'));
    const profile = parse(readFileSync(join(ROOT, 'config/example.yaml'), 'utf8')) as { outbound: { kafka: { topic: string } } };
    profile.outbound.kafka.topic = `apipay.test.missing.${randomUUID().slice(0, 8)}`;
    writeFileSync(join(dir, 'profile.yaml'), stringify(profile));
    const result = await run('dispatcher', { APIPAY_PROFILE: join(dir, 'profile.yaml') });
    expect(result.code, result.stderr).toBe(78);
    const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
    expect(lines, result.stderr).toHaveLength(1);
    expect(lines[0]).toContain(`topic ${profile.outbound.kafka.topic} does not exist`);
    expect(lines[0]).toContain('fix: ');
    expect(lines[0]).not.toContain('cannot reach Kafka');
  });
});
