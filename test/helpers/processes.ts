// Child processes of the tests (the API, the relay, the dispatcher run as real processes): starting the API process
// on the test database, stopping one and waiting for it to exit, so no process outlives its test file.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parse, stringify } from 'yaml';
import { TEST_ADMIN_TOKEN, TEST_DATABASE_URL, TEST_SECRETS_KEY } from './env.js';
import { TEST_PROVIDER_SECRETS } from './profile.js';

/** Sends `signal` to a child still running and waits for its exit; one already gone (or never started) is fine. */
export async function stopChild(child: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}

/**
 * R5, R6, R17: the real API process (src/workers/api.ts) on the test database, with the example profile plus a
 * Stripe-scheme `provider` and Temporal and Kafka at addresses nobody listens on (`env` adds or overrides). It
 * resolves once it has logged each of `listening` (the URL of each, by message) and keeps every output line in
 * `output` and stderr's text in `stderr()` for failure messages.
 */
export async function startApiProcess(options: { provider: string; env?: Record<string, string>; listening?: string[] }) {
  const profile = parse(readFileSync('config/example.yaml', 'utf8')) as { inbound: { providers: unknown } };
  profile.inbound.providers = {
    [options.provider]: {
      scheme: 'stripe',
      secret_ref: 'env:SANDBOX_STRIPE_WEBHOOK_SECRET',
      tolerance_seconds: 300,
      api_base_url: 'http://127.0.0.1:4100/stripe',
    },
  };
  const profilePath = join(mkdtempSync(join(tmpdir(), 'apipay-api-')), 'profile.yaml');
  writeFileSync(profilePath, stringify(profile));
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/workers/api.ts'], {
    env: {
      ...process.env,
      ...TEST_PROVIDER_SECRETS,
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      APIPAY_PROFILE: profilePath,
      DATABASE_URL: TEST_DATABASE_URL,
      DATABASE_POOL_MAX: '4',
      TEMPORAL_ADDRESS: '127.0.0.1:1',
      KAFKA_BROKERS: '127.0.0.1:1',
      API_PORT: '0',
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY.toString('base64'),
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  createInterface({ input: child.stderr! }).on('line', (line) => output.push(line));
  const wanted = options.listening ?? ['api listening'];
  const urls = await new Promise<Record<string, string>>((resolve, reject) => {
    const found: Record<string, string> = {};
    const timer = setTimeout(() => reject(new Error(`the API process did not start in time: ${stderr}`)), 60_000);
    child.once('exit', (code) => reject(new Error(`the API process exited with ${code}: ${stderr}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      output.push(line);
      let entry: { msg?: string; url?: string };
      try {
        entry = JSON.parse(line);
      } catch {
        return; // not a log line
      }
      if (entry.msg && wanted.includes(entry.msg)) found[entry.msg] = entry.url!;
      if (wanted.every((msg) => found[msg])) {
        clearTimeout(timer);
        resolve(found);
      }
    });
  });
  return { child, urls, output, stderr: () => stderr };
}
