// M11 on the real PostgreSQL: the portal's and console's endpoint form is generated from each destination type's one
// description: a type selector, the chosen type's fields, secret fields as password inputs that are never refilled;
// the server's refusals (a field's check, a typo in an event type) are shown beside the form, and a merchant registers
// a RabbitMQ endpoint of its own account whose password is sealed, never echoed.
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { webhookEndpoints } from '../../src/db/schema/index.js';
import { DESTINATIONS } from '../../src/outbound/destinations/index.js';
import { createKey, type Caller } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { uniqueMerchant } from '../helpers/outbound.js';
import { pageClient } from '../helpers/pages.js';
import { lazyTemporal, uniqueTaskQueues } from '../helpers/temporal.js';
import { useWorld } from '../helpers/world.js';

const world = useWorld({ label: 'portal-endpoint-form' });
const PASSWORD = 'portal-broker-pw-7d1e-never-shown';
let app: ReturnType<typeof testApp>;
let account: string;
let merchant: Caller;
let admin: Caller;

beforeAll(async () => {
  app = testApp({ db: world.db, temporal: lazyTemporal(), taskQueues: uniqueTaskQueues('portal-endpoint-form') });
  account = uniqueMerchant('form');
  merchant = await createKey(app, 'merchant', account, 'form-merchant');
  admin = await createKey(app, 'admin', undefined, 'form-admin');
});

async function signedIn(surface: 'portal' | 'console', caller: Caller) {
  const browser = pageClient(app);
  await browser.get(`/${surface}/sign-in`);
  expect((await browser.post(`/${surface}/sign-in`, { token: caller.token })).status).toBe(303);
  return browser;
}

const rabbit = { type: 'rabbitmq', event_types: 'payment.*', d_host: '127.0.0.1', d_username: 'shop', d_password: PASSWORD };

describe('M11 the endpoint form comes from the destination descriptions', () => {
  it('M11 the portal form of each type has its fields; a secret is a password input; the portal names no account', async () => {
    const browser = await signedIn('portal', merchant);
    expect((await browser.get('/portal/endpoints')).text).toContain('href="/portal/endpoints/new"');
    for (const d of Object.values(DESTINATIONS)) {
      const page = await browser.get(`/portal/endpoints/new?type=${d.type}`);
      expect(page.status).toBe(200);
      expect(page.text).toMatch(new RegExp(`<option value="${d.type}"\\s+selected`));
      for (const f of d.fields) {
        expect(page.text).toContain(`name="d_${f.name}"`);
        expect(page.text).toContain(f.label);
        if (f.secret) expect(page.text).toMatch(new RegExp(`name="d_${f.name}" type="password"`));
      }
      expect(page.text).not.toContain('name="merchant_account"');
    }
    expect((await browser.get('/portal/endpoints/new')).text).toContain('name="d_url"'); // http is the default
  });

  it('M11 a refused field is shown with its error; the form keeps the plain fields and never the password', async () => {
    const browser = await signedIn('portal', merchant);
    await browser.get('/portal/endpoints/new?type=rabbitmq');
    const page = await browser.post('/portal/endpoints/new', { ...rabbit, d_port: '99999' });
    expect(page.status).toBe(400);
    expect(page.text).toContain('id="form-errors"');
    expect(page.text).toMatch(/<code>destination\.port<\/code>: must be 1–65535/);
    expect(page.text).toMatch(/<code>destination\.routing_key<\/code>: required/);
    expect(page.text).toContain('value="127.0.0.1"');
    expect(page.text).not.toContain(PASSWORD);
    const typo = await browser.post('/portal/endpoints/new', { ...rabbit, d_routing_key: 'q', event_types: 'payment.suceeded' });
    expect(typo.status).toBe(400);
    expect(typo.text).toContain('<code>event_types.0</code>');
    expect(typo.text).toContain('payment.succeeded');
    expect(await world.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.merchantAccount, account))).toEqual([]);
  });

  it('M11 a merchant registers a RabbitMQ endpoint of its own account: secret shown once, password sealed, never echoed', async () => {
    const browser = await signedIn('portal', merchant);
    await browser.get('/portal/endpoints/new?type=rabbitmq');
    const page = await browser.post('/portal/endpoints/new', {
      ...rabbit,
      d_routing_key: 'shop-events',
      merchant_account: 'acct_someone_else',
    });
    expect(page.status, page.text).toBe(201);
    expect(page.text).toMatch(/<pre id="new-secret">whsec_/);
    expect(page.text).not.toContain(PASSWORD);
    const [row] = await world.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.merchantAccount, account));
    expect(row).toMatchObject({
      destinationType: 'rabbitmq',
      url: 'amqp://127.0.0.1:5672/%2F?queue=shop-events',
      destinationConfig: {
        host: '127.0.0.1',
        port: '5672',
        vhost: '/',
        username: 'shop',
        exchange: '',
        routing_key: 'shop-events',
        tls: 'false',
      },
      eventTypes: ['payment.*'],
    });
    expect(row!.destinationCredentials!.toString('latin1')).not.toContain(PASSWORD);
    const detail = await browser.get(`/portal/endpoints/${row!.id}`);
    expect(detail.status).toBe(200);
    expect(detail.text).not.toContain(PASSWORD);
  });

  it('M11 the console form asks an admin for the merchant account', async () => {
    const browser = await signedIn('console', admin);
    const page = await browser.get('/console/endpoints/new?type=kafka');
    expect(page.text).toContain('name="merchant_account"');
    expect(page.text).toMatch(/<select id="field-sasl_mechanism" name="d_sasl_mechanism">/);
    const refused = await browser.post('/console/endpoints/new', {
      type: 'kafka',
      event_types: '*',
      d_topic: 't',
      d_brokers: 'k1:9092',
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('<code>merchant_account</code>');
  });
});
