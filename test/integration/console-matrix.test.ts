// A20 on the real PostgreSQL: every console and portal page, read from the pages' own route table, called by every
// staff role on /console and on /portal by the account's merchant, another account's merchant and an operator's
// link, each getting the status of its row in test/fixtures/access-matrix.ts (a page without a row fails); and no
// response shows a signing secret to anyone but an admin or the account's own merchant.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { adjustmentProposals, reconciliations } from '../../src/db/schema/index.js';
import { newId, reconciliationWorkflowId } from '../../src/shared/ids.js';
import {
  MAY_SEE_SECRETS,
  PAGE_CALLERS,
  PAGE_ROUTES,
  pageRouteKeys,
  type Objects,
  type PageCaller,
} from '../fixtures/access-matrix.js';
import { callAs, createKey } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { insertDelivery, insertEndpoint, uniqueMerchant } from '../helpers/outbound.js';
import { pageClient, type PageClient } from '../helpers/pages.js';
import { lazyTemporal, uniqueTaskQueues } from '../helpers/temporal.js';
import { useWorld } from '../helpers/world.js';

let database: Database;
let app: ReturnType<typeof testApp>;
const mine = uniqueMerchant('pages-a');
const theirs = uniqueMerchant('pages-b');
const provider = `pages-${randomUUID().slice(0, 8)}`;
const browsers = {} as Record<PageCaller, PageClient>;

async function objects(account: string): Promise<Objects> {
  const endpoint = await insertEndpoint(database.db, {
    merchantAccount: account,
    url: 'http://127.0.0.1:4999/hook',
    status: 'disabled',
  });
  const { eventId, deliveryId } = await insertDelivery(database.db, {
    endpointId: endpoint.id,
    merchantAccount: account,
    body: Buffer.from('{"a":1}'),
    delivery: { status: 'DELIVERED', attemptCount: 1, deliveredAt: new Date() },
  });
  const providerEventId = `evt_${randomUUID().slice(0, 12)}`;
  const reconciliationId = reconciliationWorkflowId(provider, providerEventId);
  await database.db.insert(reconciliations).values({
    id: reconciliationId,
    provider,
    providerEventId,
    eventType: 'payment.succeeded',
    paymentReference: 'pi_x',
    amountMinor: 100n,
    currency: 'EUR',
    effectiveAt: new Date(),
    state: 'manual_review',
    acknowledgedAt: new Date(),
  });
  const adjustmentProposalId = newId('adp');
  await database.db.insert(adjustmentProposals).values({
    id: adjustmentProposalId,
    provider,
    paymentReference: 'pi_x',
    amountMinor: 500_000n,
    currency: 'EUR',
    operator: 'matrix proposer',
    reason: 'matrix',
    proposedByKey: 'apk_matrix_proposer',
  });
  return { account, provider, endpointId: endpoint.id, eventId, deliveryId, reconciliationId, keyId: '', adjustmentProposalId };
}

async function signIn(surface: 'console' | 'portal', token: string): Promise<PageClient> {
  const browser = pageClient(app);
  await browser.get(`/${surface}/sign-in`);
  expect((await browser.post(`/${surface}/sign-in`, { token })).status).toBe(303);
  return browser;
}

const surfaceOf = (who: PageCaller) => (['viewer', 'operator', 'admin'].includes(who) ? 'console' : 'portal');

const world = useWorld({ label: 'console-matrix' });
beforeAll(async () => {
  database = world.database;
  app = testApp({ db: database.db, temporal: lazyTemporal(), taskQueues: uniqueTaskQueues('pages-matrix') });
  for (const role of ['viewer', 'operator', 'admin'] as const)
    browsers[role] = await signIn('console', (await createKey(app, role, undefined, `pages-${role}`)).token);
  browsers.merchant = await signIn('portal', (await createKey(app, 'merchant', mine, 'pages-merchant')).token);
  browsers.foreign = await signIn('portal', (await createKey(app, 'merchant', theirs, 'pages-foreign')).token);
  const operator = await createKey(app, 'operator', undefined, 'pages-link-minter');
  const link = new URL((await callAs(app, operator.token, 'POST', '/portal-links', { merchant_account: mine })).json.url);
  browsers.link = pageClient(app);
  await browsers.link.get(`${link.pathname}${link.search}`);
  expect((await browsers.link.post('/portal/enter', { token: link.searchParams.get('token')! })).status).toBe(303);
});

describe('A20 every console and portal page has a row', () => {
  it('A20 the routes the pages register are exactly the rows of PAGE_ROUTES', () => {
    // Middleware and the catch-all 404 are left out (every row's 404s exercise the catch-all).
    const keys = pageRouteKeys(app.routes);
    expect(keys.size).toBeGreaterThan(15);
    expect(
      [...keys].filter((k) => !PAGE_ROUTES[k]),
      'pages without a row in test/fixtures/access-matrix.ts',
    ).toEqual([]);
    expect(
      Object.keys(PAGE_ROUTES).filter((k) => !keys.has(k)),
      'rows without a page',
    ).toEqual([]);
  });
});

describe.each(PAGE_CALLERS)('A20 pages as %s', (who) => {
  it(`A20 ${who}: every page answers its row's status, and a signing secret is shown only to an admin or the account's merchant`, async () => {
    const browser = browsers[who];
    const surface = surfaceOf(who);
    // A page read first, so the forms below carry this session's CSRF token.
    expect((await browser.get(`/${surface}/deliveries`)).status).toBe(200);
    for (const [key, row] of Object.entries(PAGE_ROUTES)) {
      const o = await objects(mine);
      const method = key.split(' ')[0]!;
      const { path, form } = row.request(o);
      const res = method === 'POST' ? await browser.post(`/${surface}${path}`, form) : await browser.get(`/${surface}${path}`);
      expect(res.status, `${who} ${key}: ${res.text.slice(0, 300)}`).toBe(row.expect[who]);
      if (res.text.includes('whsec_')) expect(MAY_SEE_SECRETS, `${who} ${key} was shown a signing secret`).toContain(who);
    }
  });
});
