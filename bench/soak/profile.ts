// The soak's profile (R11): config/demo.yaml with short retry delays and timeouts, so workflows settle within
// minutes, and the providers' payments API on the soak's sandbox port. Written next to the soak's data.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { parseProfile, type Profile } from '../../src/config/profile.js';
import { ROOT } from './stack.js';

export interface SoakSecrets {
  ADMIN_TOKEN: string;
  SECRETS_ENCRYPTION_KEY: string;
  SANDBOX_STRIPE_WEBHOOK_SECRET: string;
  SANDBOX_HMAC_WEBHOOK_SECRET: string;
}

export const soakSecrets = (): SoakSecrets => ({
  ADMIN_TOKEN: `soak_${randomBytes(18).toString('hex')}`,
  SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  SANDBOX_STRIPE_WEBHOOK_SECRET: `whsec_${randomBytes(18).toString('hex')}`,
  SANDBOX_HMAC_WEBHOOK_SECRET: randomBytes(18).toString('hex'),
});

/** Writes the profile and parses it (its secret_refs resolve from process.env, so set the secrets first). */
export function writeSoakProfile(data: string, sandboxPort: number, batched = false): { path: string; profile: Profile } {
  const document = parse(readFileSync(join(ROOT, 'config/demo.yaml'), 'utf8')) as {
    outbound: Record<string, unknown>;
    inbound: Record<string, unknown> & { providers: Record<string, { api_base_url: string }> };
  };
  // The soak's stack runs no identity provider (APIPAY_IDP=0 in stack.ts): its people are API keys, as before A25.
  delete (document as { idp?: unknown }).idp;
  document.outbound.retry_schedule = ['1s', '2s', '3s', '5s'];
  // P1 (`--batched`): the dispatcher sends the first attempts itself; a failed one's workflow waits in its start delay (P20).
  if (batched) document.outbound.delivery_mode = 'batched';
  document.outbound.request_timeout = '2s';
  // P13/P15 under the kills: the flaky merchant's runs of failures open its circuit for seconds at a time, so parked
  // fan-outs, parked retries, the probe and its release all run beside the faults.
  document.outbound.circuit = {
    open_after_failures: 3,
    open_after: '2s',
    open_after_burst: 3,
    probe_every: '1s',
    release_tick: '500ms',
  };
  document.inbound.reconciliation_timeout = '30s';
  document.inbound.provider_query_backoff = { initial: '1s', multiplier: 2, maximum: '5s' };
  document.inbound.unstarted_sweep_interval = '5s';
  document.inbound.unstarted_grace = '5s';
  for (const provider of Object.values(document.inbound.providers)) {
    const url = new URL(provider.api_base_url);
    url.port = String(sandboxPort);
    provider.api_base_url = url.toString().replace(/\/$/, '');
  }
  const path = join(data, 'profile.yaml');
  writeFileSync(path, `# Written by bench/soak (npm run soak); regenerated on every run.\n${stringify(document)}`);
  return { path, profile: parseProfile(document, path) };
}
