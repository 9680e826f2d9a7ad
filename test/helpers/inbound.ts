// Inbound test helpers: a profile with providers of the test's own (so sweeps and rows stay per file), signed
// requests for them, and probes of what the ingress stored and started.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter, WorkflowNotFoundError } from '@temporalio/common';
import { sql } from 'drizzle-orm';
import type { Db } from '../../src/db/client.js';
import { hmacPayload, stripePayload, type SandboxEvent } from '../../src/sandbox/payloads.js';
import { hmacSignature, stripeSignatureHeader } from '../../src/sandbox/signing.js';
import { reconciliationWorkflowId } from '../../src/shared/ids.js';
import { TEST_PROVIDER_SECRETS, testProfile } from './profile.js';

/** Two providers named for this test file: `<label>-stripe-xxxx` and `<label>-hmac-xxxx`. */
export function inboundTestProfile(label: string, overrides: Record<string, unknown> = {}) {
  const suffix = randomUUID().slice(0, 6);
  const stripe = `${label}-stripe-${suffix}`;
  const hmac = `${label}-hmac-${suffix}`;
  const profile = testProfile({
    ...overrides,
    inbound: {
      ...((overrides.inbound as object) ?? {}),
      providers: {
        [stripe]: { scheme: 'stripe', secret_ref: 'env:SANDBOX_STRIPE_WEBHOOK_SECRET', tolerance_seconds: 300, api_base_url: 'http://127.0.0.1:4100/stripe' },
        [hmac]: { scheme: 'hmac', secret_ref: 'env:SANDBOX_HMAC_WEBHOOK_SECRET', header: 'X-Sandbox-Signature', encoding: 'base64', api_base_url: 'http://127.0.0.1:4100/hmac' },
      },
    },
  });
  return { profile, stripe, hmac };
}

export const uniqueReference = () => `pi_${randomUUID().replaceAll('-', '').slice(0, 20)}`;

export function stripeEvent(event: Partial<SandboxEvent> = {}) {
  return stripePayload({ type: 'payment.succeeded', reference: uniqueReference(), amountMinor: 1999, currency: 'EUR', ...event });
}

export function stripeRequest(body: string | Buffer, now = new Date(), extra: Record<string, string> = {}): RequestInit {
  return {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/json',
      'stripe-signature': stripeSignatureHeader(body, TEST_PROVIDER_SECRETS.SANDBOX_STRIPE_WEBHOOK_SECRET, Math.floor(now.getTime() / 1000)),
      ...extra,
    },
  };
}

export function hmacRequest(body: string | Buffer): RequestInit {
  return {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/json',
      'x-sandbox-signature': hmacSignature(body, TEST_PROVIDER_SECRETS.SANDBOX_HMAC_WEBHOOK_SECRET, 'base64'),
    },
  };
}

export { hmacPayload };

export async function storedFor(db: Db, provider: string, providerEventId: string) {
  const registry = await db.execute(
    sql`select registered_at from provider_event_registry where provider = ${provider} and provider_event_id = ${providerEventId}`,
  );
  const receipts = await db.execute<{ id: string; raw_body: Buffer; headers: Record<string, string>; workflow_started_at: Date | null }>(
    sql`select id, raw_body, headers, workflow_started_at from webhook_receipts where provider = ${provider} and provider_event_id = ${providerEventId}`,
  );
  return { registry: registry.length, receipts: receipts.length, receipt: receipts[0] };
}

/** The reconciliation workflow of an event: its description and start input, or null when it does not exist. */
export async function reconciliationOf(client: Client, provider: string, providerEventId: string) {
  const handle = client.workflow.getHandle(reconciliationWorkflowId(provider, providerEventId));
  try {
    const description = await handle.describe();
    const history = await handle.fetchHistory();
    const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    return { description, input: payload ? (defaultPayloadConverter.fromPayload(payload) as Record<string, unknown>) : undefined, handle };
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return null;
    throw error;
  }
}

/** Closes what a test started on its own task queue (no worker ever polls it). */
export async function terminateAll(client: Client, workflowIds: Iterable<string>): Promise<void> {
  await Promise.all(
    [...workflowIds].map((id) =>
      client.workflow
        .getHandle(id)
        .terminate('test cleanup')
        .catch(() => {}),
    ),
  );
}

/** Runs of one workflow id in visibility (which lags the start by a moment on the dev server). */
export async function runsOf(client: Client, workflowId: string, atLeast = 1, timeoutMs = 10_000): Promise<unknown[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const runs: unknown[] = [];
    for await (const run of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.push(run);
    if (runs.length >= atLeast || Date.now() > deadline) return runs;
    await new Promise((r) => setTimeout(r, 200));
  }
}
