// A30 end to end with the stack's real Keycloak in Chromium: olga (operator, password + TOTP) proposes a resolution
// above the limit through the admin API; otto opens the review in the console, is sent to Keycloak's own login page
// by the authorization code flow with PKCE, signs in with his password and a TOTP code (otplib), comes back to the
// page under his own name, and approves: the ledger posts, attributed to both people. Olga, signed in to the console
// the same way, cannot approve her own proposal. The console listens on 127.0.0.1:3999, the test port the demo
// realm's apipay-console client lists beside the demo's 3000. APIPAY_IDP=0 skips this.
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callAs } from '../helpers/access.js';
import { demoPerson, IDP_AUDIENCE, IDP_ROLES, KEYCLOAK_ENABLED, KEYCLOAK_ISSUER, keycloakToken } from '../helpers/idp.js';
import { ledgerRowsFor } from '../helpers/reconciliation.js';
import { useReviewWorld } from '../helpers/review-world.js';
import { signInOnKeycloak } from './keycloak-page.js';
import { CHROMIUM } from './world.js';

const PORT = 3999;
const ORIGIN = `http://127.0.0.1:${PORT}`;
const CONSOLE_SECRET = JSON.parse(
  readFileSync(new URL('../../scripts/stack/keycloak-realm.json', import.meta.url), 'utf8'),
).clients.find((c: { clientId: string }) => c.clientId === 'apipay-console').secret as string;

process.env.TEST_KEYCLOAK_CONSOLE_SECRET = CONSOLE_SECRET; // read when the review world's profile is parsed

const review = useReviewWorld({
  label: 'console-idp',
  inbound: { dual_control_above: { EUR: 1000 } },
  profile: () => ({
    http: { public_url: ORIGIN },
    idp: {
      issuer: KEYCLOAK_ISSUER,
      audience: IDP_AUDIENCE,
      roles: IDP_ROLES,
      console: { client_id: 'apipay-console', client_secret_ref: 'env:TEST_KEYCLOAK_CONSOLE_SECRET' },
    },
  }),
});
let browser: Browser;
let server: ServerType;

describe.skipIf(!KEYCLOAK_ENABLED)('A30 console sign-in through Keycloak in Chromium (APIPAY_IDP=0 skips this)', () => {
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  // The app exists once the review world's beforeAll ran; the server is started in the test.
  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  it(
    'A30 olga proposes; otto signs in on Keycloak (code + PKCE, password + TOTP) and approves in the console; olga cannot',
    { timeout: 240_000 },
    async () => {
      server = serve({ fetch: review.app.fetch, hostname: '127.0.0.1', port: PORT });
      await new Promise<void>((resolve, reject) => {
        server.once('listening', () => resolve());
        server.once('error', reject);
      });
      expect((server.address() as AddressInfo).port).toBe(PORT);
      const parked = await review.parked('250000');
      const proposed = await callAs(review.app, await keycloakToken('olga'), 'POST', `${parked.path}/resolution`, {
        decision: 'applied',
        reason: 'provider statement confirms the amount',
        post: 'webhook',
      });
      expect(proposed.status, proposed.text).toBe(202);
      expect(proposed.json.proposal.proposed_by_key).toBe(`idp:${demoPerson('olga').subject}@${KEYCLOAK_ISSUER}`);
      const reviewPage = `${ORIGIN}/console/reviews/${encodeURIComponent(parked.handle.workflowId)}`;

      // Olga in the console: her own proposal has no approval for her.
      const olga = await browser.newContext();
      const olgaPage = await olga.newPage();
      await olgaPage.goto(`${ORIGIN}/console/login?return=${encodeURIComponent(new URL(reviewPage).pathname)}`);
      expect(olgaPage.url()).toContain(`${KEYCLOAK_ISSUER}/protocol/openid-connect/auth`);
      const auth = new URL(olgaPage.url());
      expect(auth.searchParams.get('code_challenge_method')).toBe('S256');
      expect(auth.searchParams.get('client_id')).toBe('apipay-console');
      await signInOnKeycloak(olgaPage, 'olga');
      await olgaPage.waitForURL(`${reviewPage}**`);
      expect(await olgaPage.textContent('body')).toContain('Olga Operator');
      await olgaPage.click('#approve');
      await olgaPage.waitForLoadState('load');
      expect((await olgaPage.textContent('body'))?.replace(/\s+/g, ' ')).toMatch(
        /dual control: you proposed rpr_[\w-]+; a second principal must approve it/,
      );
      expect(await ledgerRowsFor(review.world.database.db, parked.event.paymentReference)).toEqual([]);
      await olga.close();

      // Otto: the console sends him to Keycloak, he comes back to the page and approves.
      const otto = await browser.newContext();
      const page = await otto.newPage();
      await page.goto(`${ORIGIN}/console/login?return=${encodeURIComponent(new URL(reviewPage).pathname)}`);
      await signInOnKeycloak(page, 'otto');
      await page.waitForURL(`${reviewPage}**`);
      const body = await page.textContent('body');
      expect(body).toContain('Otto Operator');
      await page.click('#approve');
      await page.waitForLoadState('load');
      const rows = await ledgerRowsFor(review.world.database.db, parked.event.paymentReference);
      expect(rows.length, (await page.textContent('body')) ?? '').toBeGreaterThan(0);
      const state = await callAs(review.app, await keycloakToken('vera'), 'GET', parked.path);
      expect(state.json.resolution).toMatchObject({ decision: 'applied' });
      expect(JSON.stringify(state.json)).toContain(`idp:${demoPerson('otto').subject}@${KEYCLOAK_ISSUER}`);
      await otto.close();
    },
  );
});
