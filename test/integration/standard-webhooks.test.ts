// O16, O17: real POSTs of the delivery activity to a real local receiver, verified by the verifiers merchants use:
// `standardwebhooks` from npm (1.1.1) and from PyPI (1.1.0, in the venv scripts/lib/common.sh ensure_python_verifiers
// makes). Both libraries verify `v1` (HMAC) only and skip `v1a` entries, so v1a is checked with node:crypto's ed25519
// directly and with our own `verify` and the whpk_ key the admin API shows. Rotation (two keys sign during the grace
// period), a stable webhook-id across retries, and an audited switch of scheme that applies from the next attempt.
import { spawnSync } from 'node:child_process';
import { createPublicKey, verify as edVerify } from 'node:crypto';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { and, eq } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeliveryActivities } from '../../src/activities/delivery.js';
import { createDatabase, type Database } from '../../src/db/client.js';
import { auditEvents, deliveries, events } from '../../src/db/schema/index.js';
import { newId } from '../../src/shared/ids.js';
import { SIGNATURE_HEADER, verify } from '../../src/signing/index.js';
import { testApp } from '../helpers/app.js';
import { TEST_ADMIN_TOKEN, TEST_DATABASE_URL, TEST_SECRETS_KEY } from '../helpers/env.js';
import { envelope, startReceiver, uniqueMerchant, type Received } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import { connectDevServer, testLogger, uniqueTaskQueues } from '../helpers/temporal.js';

const PYTHON =
  process.env.STANDARDWEBHOOKS_PYTHON ??
  join(process.env.APIPAY_CACHE ?? join(homedir(), '.cache', 'apipay'), 'py', 'standardwebhooks-1.1.0', 'bin', 'python');

const PY_VERIFY = `
import json, sys
from standardwebhooks.webhooks import Webhook
req = json.load(sys.stdin)
try:
    Webhook(req["secret"]).verify(bytes.fromhex(req["body"]), req["headers"])
    print("ok")
except Exception as e:
    print("fail:" + type(e).__name__ + ":" + str(e))
`;

/** The PyPI library's verdict on one received request: "ok" or "fail:<error>". */
function pythonVerdict(request: Received, secret: string): string {
  const headers = Object.fromEntries(Object.entries(request.headers).filter(([k]) => k.startsWith('webhook-'))) as Record<
    string,
    string
  >;
  const run = spawnSync(PYTHON, ['-c', PY_VERIFY], {
    input: JSON.stringify({ secret, body: request.body.toString('hex'), headers }),
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`python verifier did not run: ${run.stderr}`);
  return run.stdout.trim();
}

function npmVerdict(request: Received, secret: string): string {
  try {
    new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
    return 'ok';
  } catch (error) {
    return `fail:${(error as Error).message}`;
  }
}

/** node:crypto's own ed25519 check of every v1a entry against one whpk_ key: how many match. */
function v1aMatches(request: Received, publicKey: string): number {
  const key = createPublicKey({
    key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(publicKey.slice(5), 'base64')]),
    format: 'der',
    type: 'spki',
  });
  const content = Buffer.concat([
    Buffer.from(`${request.headers['webhook-id']}.${request.headers['webhook-timestamp']}.`),
    request.body,
  ]);
  return String(request.headers['webhook-signature'])
    .split(' ')
    .filter((e) => e.startsWith('v1a,'))
    .filter((e) => edVerify(null, content, key, Buffer.from(e.slice(4), 'base64'))).length;
}

let database: Database;
let temporal: Awaited<ReturnType<typeof connectDevServer>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const replies: number[] = [];
const profile = testProfile();
const auth = { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' };

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 4 });
  temporal = await connectDevServer();
  receiver = await startReceiver(() => ({ status: replies.shift() ?? 200 }));
});
afterAll(async () => {
  await receiver.close();
  await temporal.close();
  await database.close();
});

const activities = () => createDeliveryActivities({ db: database.db, profile, logger: testLogger, secretsKey: TEST_SECRETS_KEY });

async function deliveryTo(endpointId: string, merchantAccount: string) {
  const event = envelope({ merchantAccount });
  const body = Buffer.from(JSON.stringify(event));
  await database.db
    .insert(events)
    .values({ eventPublicId: event.id, merchantAccount, type: event.type, livemode: false, createdUnix: event.created, body });
  const deliveryId = newId('whd');
  await database.db.insert(deliveries).values({ id: deliveryId, eventPublicId: event.id, endpointId, merchantAccount });
  return { deliveryId, eventId: event.id };
}

async function attempt(deliveryId: string, attemptNumber: number): Promise<Received> {
  const before = receiver.received.length;
  await activities().attemptDelivery({ deliveryId, attemptNumber, scheduledAt: Date.now(), retryInMs: 60_000 });
  expect(receiver.received.length).toBe(before + 1);
  return receiver.received.at(-1)!;
}

describe('Standard Webhooks signatures (O16, O17)', () => {
  it('O16/O17 standard scheme with ed25519: verified by npm and PyPI standardwebhooks (v1) and ed25519 (v1a); webhook-id stable across retries', async () => {
    const app = testApp({ db: database.db, temporal: temporal.client, taskQueues: uniqueTaskQueues('stdwh') });
    const merchantAccount = uniqueMerchant('stdwh');
    const created = await app.request('/admin/v1/webhook-endpoints', {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({
        merchant_account: merchantAccount,
        url: `${receiver.url}/hooks`,
        event_types: ['*'],
        livemode: false,
        signature_scheme: 'standard',
        ed25519_signing: true,
      }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const endpoint = (await created.json()) as {
      id: string;
      secret: string;
      signature_scheme: string;
      signing_public_key: string;
    };
    expect(endpoint.signature_scheme).toBe('standard');
    expect(endpoint.signing_public_key).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    expect(endpoint.secret).toMatch(/^whsec_/);

    const { deliveryId, eventId } = await deliveryTo(endpoint.id, merchantAccount);
    replies.push(500);
    const first = await attempt(deliveryId, 1);
    const second = await attempt(deliveryId, 2);
    for (const request of [first, second]) {
      expect(request.headers['webhook-id']).toBe(eventId);
      expect(request.headers[SIGNATURE_HEADER.toLowerCase()]).toBeUndefined();
      expect(String(request.headers['webhook-signature'])).toMatch(/^v1,[A-Za-z0-9+/=]+ v1a,[A-Za-z0-9+/=]+$/);
      expect(npmVerdict(request, endpoint.secret)).toBe('ok');
      expect(pythonVerdict(request, endpoint.secret)).toBe('ok');
      expect(v1aMatches(request, endpoint.signing_public_key)).toBe(1);
      expect(verify(request.body, request.headers, endpoint.signing_public_key).id).toBe(eventId);
      expect(verify(request.body, request.headers, endpoint.secret).id).toBe(eventId);
    }
    // A tampered body fails every verifier.
    const tampered = { ...second, body: Buffer.from(second.body.toString().replace('"amount":1000', '"amount":9000')) };
    expect(npmVerdict(tampered, endpoint.secret)).toMatch(/^fail:/);
    expect(pythonVerdict(tampered, endpoint.secret)).toMatch(/^fail:/);
    expect(v1aMatches(tampered, endpoint.signing_public_key)).toBe(0);
    expect(() => verify(tampered.body, tampered.headers, endpoint.signing_public_key)).toThrow(
      /no webhook-signature entry matches/,
    );

    // The libraries' v1a support, as it is: a header with only the v1a entry verifies with neither library.
    const onlyV1a = {
      ...second,
      headers: { ...second.headers, 'webhook-signature': String(second.headers['webhook-signature']).split(' ')[1]! },
    };
    expect(npmVerdict(onlyV1a, endpoint.secret)).toMatch(/No matching signature/);
    expect(pythonVerdict(onlyV1a, endpoint.secret)).toMatch(/No matching signature/);
    expect(verify(onlyV1a.body, onlyV1a.headers, endpoint.signing_public_key).id).toBe(eventId);

    // O9 in the standard scheme: after a rotation both secrets and both ed25519 keys sign during the grace period.
    const rotated = await app.request(`/admin/v1/webhook-endpoints/${endpoint.id}/secret/rotate`, {
      method: 'POST',
      headers: auth,
    });
    expect(rotated.status).toBe(200);
    const next = (await rotated.json()) as { secret: string; signing_public_key: string };
    expect(next.secret).not.toBe(endpoint.secret);
    expect(next.signing_public_key).not.toBe(endpoint.signing_public_key);
    const later = await deliveryTo(endpoint.id, merchantAccount);
    const during = await attempt(later.deliveryId, 1);
    expect(
      String(during.headers['webhook-signature'])
        .split(' ')
        .map((e) => e.split(',')[0]),
    ).toEqual(['v1', 'v1', 'v1a', 'v1a']);
    for (const secret of [next.secret, endpoint.secret]) {
      expect(npmVerdict(during, secret)).toBe('ok');
      expect(pythonVerdict(during, secret)).toBe('ok');
    }
    expect(v1aMatches(during, next.signing_public_key)).toBe(1);
    expect(v1aMatches(during, endpoint.signing_public_key)).toBe(1);
  });

  it('O16 apipay stays the default; switching an endpoint to standard and back is audited and applies from the next attempt', async () => {
    const app = testApp({ db: database.db, temporal: temporal.client, taskQueues: uniqueTaskQueues('stdwh') });
    const merchantAccount = uniqueMerchant('stdsw');
    const created = await app.request('/admin/v1/webhook-endpoints', {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({
        merchant_account: merchantAccount,
        url: `${receiver.url}/switch`,
        event_types: ['*'],
        livemode: false,
      }),
    });
    const endpoint = (await created.json()) as {
      id: string;
      secret: string;
      signature_scheme: string;
      signing_public_key: string | null;
    };
    expect(endpoint.signature_scheme).toBe('apipay');
    expect(endpoint.signing_public_key).toBeNull();
    const { deliveryId, eventId } = await deliveryTo(endpoint.id, merchantAccount);
    replies.push(500, 500);
    const before = await attempt(deliveryId, 1);
    expect(
      verify(before.body, before.headers[SIGNATURE_HEADER.toLowerCase()] as string, endpoint.secret).timestamp,
    ).toBeGreaterThan(0);
    expect(before.headers['webhook-signature']).toBeUndefined();

    const patched = await app.request(`/admin/v1/webhook-endpoints/${endpoint.id}`, {
      method: 'PATCH',
      headers: auth,
      body: JSON.stringify({ signature_scheme: 'standard' }),
    });
    expect(patched.status).toBe(200);
    const retried = await attempt(deliveryId, 2);
    expect(retried.headers[SIGNATURE_HEADER.toLowerCase()]).toBeUndefined();
    expect(retried.headers['webhook-id']).toBe(eventId);
    expect(String(retried.headers['webhook-signature'])).toMatch(/^v1,[^ ]+$/); // no ed25519 key: v1 only
    expect(npmVerdict(retried, endpoint.secret)).toBe('ok');
    expect(pythonVerdict(retried, endpoint.secret)).toBe('ok');
    // Our own verify takes the request's headers in either scheme.
    expect(verify(retried.body, retried.headers, endpoint.secret).id).toBe(eventId);
    expect(verify(before.body, before.headers, endpoint.secret).id).toBeUndefined();

    await app.request(`/admin/v1/webhook-endpoints/${endpoint.id}`, {
      method: 'PATCH',
      headers: auth,
      body: JSON.stringify({ signature_scheme: 'apipay' }),
    });
    const back = await attempt(deliveryId, 3);
    expect(back.headers['webhook-signature']).toBeUndefined();
    expect(verify(back.body, back.headers, endpoint.secret).timestamp).toBeGreaterThan(0);

    const audited = await database.db
      .select({ before: auditEvents.before, after: auditEvents.after })
      .from(auditEvents)
      .where(and(eq(auditEvents.targetId, endpoint.id), eq(auditEvents.action, 'endpoint.update')))
      .orderBy(auditEvents.id);
    expect(audited.map((a) => [a.before?.signature_scheme, a.after?.signature_scheme])).toEqual([
      ['apipay', 'standard'],
      ['standard', 'apipay'],
    ]);
  });

  it('O16 the PyPI verifier is installed where the tests look for it', () => {
    expect(existsSync(PYTHON)).toBe(true);
  });
});
