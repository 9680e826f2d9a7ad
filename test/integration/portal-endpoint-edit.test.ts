// M11 with A3, A20 on the real PostgreSQL: the portal's and console's edit form of an endpoint's destination settings
// comes from the type's one description: non-secret fields prefilled, the secret write-only (blank keeps it). A
// merchant changes its RabbitMQ endpoint's routing key (audited, the password kept); a bad field is a 400 naming it
// and changes nothing; another merchant's endpoint does not exist (404); a new password replaces the sealed one.
import { and, eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { auditEvents, webhookEndpoints } from '../../src/db/schema/index.js';
import { openCredentials } from '../../src/outbound/destinations/credentials.js';
import { keyringFromEnv } from '../../src/shared/keyring.js';
import { callAs, createKey, type Caller } from '../helpers/access.js';
import { testApp, TEST_API_ENV } from '../helpers/app.js';
import { uniqueMerchant } from '../helpers/outbound.js';
import { pageClient } from '../helpers/pages.js';
import { lazyTemporal, uniqueTaskQueues } from '../helpers/temporal.js';
import { useWorld } from '../helpers/world.js';

const world = useWorld({ label: 'portal-endpoint-edit' });
const PASSWORD = 'edit-broker-pw-51c0-never-shown';
const keys = keyringFromEnv(TEST_API_ENV);
let app: ReturnType<typeof testApp>;
let account: string;
let merchant: Caller;
let foreign: Caller;
let admin: Caller;
let endpointId: string;

beforeAll(async () => {
  app = testApp({ db: world.db, temporal: lazyTemporal(), taskQueues: uniqueTaskQueues('portal-endpoint-edit') });
  account = uniqueMerchant('edit');
  merchant = await createKey(app, 'merchant', account, 'edit-merchant');
  foreign = await createKey(app, 'merchant', uniqueMerchant('edit-other'), 'edit-foreign');
  admin = await createKey(app, 'admin', undefined, 'edit-admin');
  const created = await callAs(app, merchant.token, 'POST', '/webhook-endpoints', {
    merchant_account: account,
    type: 'rabbitmq',
    destination: { host: '127.0.0.1', username: 'shop', password: PASSWORD, routing_key: 'shop-events' },
    event_types: ['payment.*'],
    livemode: false,
  });
  expect(created.status, created.text).toBe(201);
  endpointId = created.json.id;
});

async function signedIn(surface: 'portal' | 'console', caller: Caller) {
  const browser = pageClient(app);
  await browser.get(`/${surface}/sign-in`);
  expect((await browser.post(`/${surface}/sign-in`, { token: caller.token })).status).toBe(303);
  return browser;
}

const row = async () => (await world.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, endpointId)))[0]!;
const password = async () => {
  const r = await row();
  return openCredentials(r.id, { ciphertext: r.destinationCredentials, keyId: r.destinationCredentialsKeyId }, keys).password;
};

describe('M11 editing an endpoint from the destination description', () => {
  it('M11 the edit form prefills the plain fields and never the password; the detail page links to it', async () => {
    const browser = await signedIn('portal', merchant);
    expect((await browser.get(`/portal/endpoints/${endpointId}`)).text).toContain(`href="/portal/endpoints/${endpointId}/edit"`);
    const page = await browser.get(`/portal/endpoints/${endpointId}/edit`);
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/name="d_routing_key"\s+value="shop-events"/);
    expect(page.text).toMatch(/name="d_host"\s+value="127.0.0.1"/);
    expect(page.text).toMatch(/name="d_password"\s+type="password"[^>]*placeholder="leave blank to keep"/);
    expect(page.text).not.toMatch(/name="d_password"[^>]*required/);
    expect(page.text).not.toContain(PASSWORD);
  });

  it('M11 a merchant changes its routing key: a blank password keeps the sealed one; audited as endpoint.update', async () => {
    const browser = await signedIn('portal', merchant);
    const form = await browser.get(`/portal/endpoints/${endpointId}/edit`);
    expect(form.status).toBe(200);
    const saved = await browser.post(`/portal/endpoints/${endpointId}/edit`, {
      event_types: 'payment.*',
      d_host: '127.0.0.1',
      d_port: '5672',
      d_vhost: '/',
      d_username: 'shop',
      d_password: '',
      d_routing_key: 'shop-events-v2',
      d_tls: 'false',
    });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.text).toContain('Saved.');
    expect(saved.text).not.toContain(PASSWORD);
    const after = await row();
    expect(after.destinationConfig).toMatchObject({ routing_key: 'shop-events-v2', host: '127.0.0.1', username: 'shop' });
    expect(after.url).toBe('amqp://127.0.0.1:5672/%2F?queue=shop-events-v2');
    expect(await password()).toBe(PASSWORD);
    const audits = await world.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.targetId, endpointId), eq(auditEvents.action, 'endpoint.update')));
    expect(audits).toHaveLength(1);
    expect(audits[0]!.actorName).toContain('edit-merchant');
    expect(JSON.stringify(audits[0])).not.toContain(PASSWORD);
    expect(JSON.stringify(audits[0]!.after)).toContain('shop-events-v2');
  });

  it('M11 a bad field is a 400 naming it, the form kept and nothing changed', async () => {
    const before = await row();
    const browser = await signedIn('portal', merchant);
    await browser.get(`/portal/endpoints/${endpointId}/edit`);
    const refused = await browser.post(`/portal/endpoints/${endpointId}/edit`, {
      event_types: 'payment.*',
      d_port: '99999',
      d_routing_key: 'never-stored',
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/<code>destination\.port<\/code>: must be 1–65535/);
    expect(refused.text).toContain('value="never-stored"');
    const typo = await browser.post(`/portal/endpoints/${endpointId}/edit`, { event_types: 'payment.suceeded' });
    expect(typo.status).toBe(400);
    expect(typo.text).toContain('<code>event_types.0</code>');
    expect((await row()).updatedAt).toEqual(before.updatedAt);
    expect((await row()).destinationConfig).toEqual(before.destinationConfig);
  });

  it("M11 another merchant's endpoint does not exist for it: 404 on the form and on the save", async () => {
    const before = await row();
    const browser = await signedIn('portal', foreign);
    expect((await browser.get(`/portal/endpoints/${endpointId}/edit`)).status).toBe(404);
    await browser.get('/portal/endpoints');
    const post = await browser.post(`/portal/endpoints/${endpointId}/edit`, { event_types: '*', d_routing_key: 'stolen' });
    expect(post.status).toBe(404);
    expect((await row()).destinationConfig).toEqual(before.destinationConfig);
  });

  it('M11 an admin on the console sets a new password: sealed, never shown', async () => {
    const browser = await signedIn('console', admin);
    const page = await browser.get(`/console/endpoints/${endpointId}/edit`);
    expect(page.status).toBe(200);
    const saved = await browser.post(`/console/endpoints/${endpointId}/edit`, {
      event_types: 'payment.*',
      d_password: 'rotated-broker-pw-9e2a',
    });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.text).not.toContain('rotated-broker-pw-9e2a');
    expect(await password()).toBe('rotated-broker-pw-9e2a');
    expect((await row()).destinationConfig).toMatchObject({ routing_key: 'shop-events-v2' });
  });
});
