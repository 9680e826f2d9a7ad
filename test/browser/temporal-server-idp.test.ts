// A31, A27 end to end on ApiPay's own Temporal server (APIPAY_TEMPORAL=server) and the stack's Keycloak: under
// `inbound.resolution_via_temporal: idp` otto sends a resolution above the dual-control limit through the PUBLIC
// Temporal frontend with his own Keycloak token (whatever identity his client claims, the server stamps
// idp:<sub>@<issuer>), so it becomes a proposal by otto; his own approval through the admin API, even with a fresh
// second factor, is refused; fiona signs in on Keycloak's page in Chromium (password + TOTP, the device flow: a token
// with auth_time) and approves: the ledger posts. Then olga signs in to the Temporal UI through Keycloak's login page
// (password + TOTP) and sees ApiPay's namespace and that workflow. The workers and the app use the internal frontend
// (the system caller, scripts/test.sh). Skipped, saying so, outside server mode (APIPAY_TEMPORAL_AUTHZ_ADDRESS unset).
import { Client, Connection } from '@temporalio/client';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveUpdate } from '../../src/shared/inbound.js';
import { callAs } from '../helpers/access.js';
import { demoPerson, IDP_AUDIENCE, IDP_ROLES, KEYCLOAK_ENABLED, KEYCLOAK_ISSUER, keycloakToken } from '../helpers/idp.js';
import { ledgerRowsFor } from '../helpers/reconciliation.js';
import { useReviewWorld } from '../helpers/review-world.js';
import { deviceToken, signInOnKeycloak } from './keycloak-page.js';
import { CHROMIUM } from './world.js';

const ADDRESS = process.env.APIPAY_TEMPORAL_AUTHZ_ADDRESS ?? '';
const UI = (process.env.APIPAY_TEMPORAL_UI_URL ?? 'http://127.0.0.1:8233').replace(/\/+$/, '');
const NAMESPACE = process.env.TEMPORAL_NAMESPACE ?? 'default';
const SERVER_MODE = Boolean(ADDRESS) && KEYCLOAK_ENABLED;
if (!SERVER_MODE)
  console.warn(
    "[temporal-server-idp] SKIPPED: needs ApiPay's Temporal server (APIPAY_TEMPORAL=server) and the stack's Keycloak; set APIPAY_TEMPORAL_AUTHZ_ADDRESS to its public frontend (docs/testing.md, 'Temporal server mode')",
  );

const subjectKey = (username: string) => `idp:${demoPerson(username).subject}@${KEYCLOAK_ISSUER}`;

describe.skipIf(!SERVER_MODE)('A31 people of the IdP through the Temporal server (server mode only)', () => {
  const review = useReviewWorld({
    label: 'tsrv-idp',
    inbound: { resolution_via_temporal: 'idp', dual_control_above: { EUR: 1500 } },
    profile: () => ({ idp: { issuer: KEYCLOAK_ISSUER, audience: IDP_AUDIENCE, roles: IDP_ROLES } }),
  });
  let browser: Browser;
  let connection: Connection | undefined;
  let workflowId = '';

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await connection?.close();
    await browser?.close();
  });

  it(
    'A31 otto resolves through the public frontend with his token: a proposal by his IdP subject; his own approval is refused; fiona (password + TOTP) approves and the ledger posts',
    { timeout: 300_000 },
    async () => {
      const parked = await review.parked('250000');
      workflowId = parked.handle.workflowId;
      connection = await Connection.connect({
        address: ADDRESS,
        metadata: { authorization: `Bearer ${await keycloakToken('otto')}` },
      });
      const otto = new Client({ connection, namespace: NAMESPACE, identity: 'cfo@forged' }).workflow.getHandle(workflowId);
      const answer = await otto.executeUpdate(resolveUpdate, {
        args: [{ decision: 'applied', operator: 'cfo', reason: 'provider statement line 7', post: 'webhook' }],
      });
      expect(answer.state).toBe('manual_review');
      expect(answer.proposal?.proposedBy).toMatchObject({ key: subjectKey('otto'), via: 'temporal' });
      expect(await ledgerRowsFor(review.world.db, parked.event.paymentReference)).toEqual([]);

      const path = `${parked.path}/resolution/approve`;
      const own = await callAs(review.app, await deviceToken(browser, 'otto'), 'POST', path);
      expect(own.status, own.text).toBe(403);
      expect(own.json.error.message).toMatch(/you proposed/);
      expect(await ledgerRowsFor(review.world.db, parked.event.paymentReference)).toEqual([]);

      const approved = await callAs(review.app, await deviceToken(browser, 'fiona'), 'POST', path);
      expect(approved.status, approved.text).toBe(200);
      expect(approved.json.resolution).toMatchObject({
        via: 'temporal',
        operator_key: subjectKey('otto'),
        approved_by: 'Fiona Finance',
        approved_by_key: subjectKey('fiona'),
      });
      expect(await ledgerRowsFor(review.world.db, parked.event.paymentReference)).toHaveLength(1);
    },
  );

  it(
    'A31 olga signs in to the Temporal UI on Keycloak (password + TOTP) and sees ApiPay’s namespace and its workflow',
    { timeout: 180_000 },
    async () => {
      const { runId } = await review.world.temporal.client.workflow.getHandle(workflowId).describe();
      const list = `${UI}/namespaces/${NAMESPACE}/workflows`;
      const row = (page: Page) => page.locator(`a[href*="${runId}"]`);
      // Signed out, the UI shows no workflow of the namespace.
      const stranger = await browser.newContext();
      try {
        const page = await stranger.newPage();
        await page.goto(list);
        await page.waitForTimeout(5_000);
        expect(await row(page).count()).toBe(0);
      } finally {
        await stranger.close();
      }
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        await page.goto(`${UI}/auth/sso`);
        expect(page.url()).toContain(`${KEYCLOAK_ISSUER}/protocol/openid-connect/auth`);
        await signInOnKeycloak(page, 'olga');
        await page.waitForURL((url) => url.href.startsWith(UI), { timeout: 30_000 });
        await page.goto(list);
        // The run id only comes from the server: the row of the workflow olga may read, in ApiPay's namespace.
        await row(page).first().waitFor({ timeout: 60_000 });
        expect(page.url()).toContain(`/namespaces/${NAMESPACE}/workflows`);
        expect(await page.getByText(workflowId).count()).toBeGreaterThan(0);
      } finally {
        await context.close();
      }
    },
  );
});
