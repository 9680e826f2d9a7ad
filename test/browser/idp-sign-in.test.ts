// A25, A27 end to end with the stack's real Keycloak: a person signs in on Keycloak's own login page in Chromium
// (password, then a TOTP code made by otplib) through the CLI client's device flow; the access token it yields
// carries amr otp and auth_time, and approves a proposal another real person made, so dual control is two people
// the IdP vouches for. A Keycloak direct-grant token (no auth_time) is sent to step-up instead. APIPAY_IDP=0 skips.
import { randomUUID } from 'node:crypto';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { callAs } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { TEST_DATABASE_URL } from '../helpers/env.js';
import { demoPerson, IDP_AUDIENCE, IDP_ROLES, KEYCLOAK_ENABLED, KEYCLOAK_ISSUER, keycloakToken } from '../helpers/idp.js';
import { ledgerRowsFor } from '../helpers/reconciliation.js';
import { connectDevServer, uniqueTaskQueues } from '../helpers/temporal.js';
import { deviceToken } from './keycloak-page.js';
import { CHROMIUM } from './world.js';
import { adjustmentProfile, reviewPayment } from '../helpers/adjustments.js';

let browser: Browser;
let database: Database;
let temporal: Awaited<ReturnType<typeof connectDevServer>>;
let app: ReturnType<typeof testApp>;
const provider = `idp-web-${randomUUID().slice(0, 6)}`;

describe.skipIf(!KEYCLOAK_ENABLED)('A27 two real people of the stack Keycloak (APIPAY_IDP=0 skips this)', () => {
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM });
    database = createDatabase(TEST_DATABASE_URL, { max: 2 });
    temporal = await connectDevServer();
    const profile = adjustmentProfile(provider, {
      idp: { issuer: KEYCLOAK_ISSUER, audience: IDP_AUDIENCE, roles: IDP_ROLES },
      dualControlAbove: { EUR: 1000 },
    });
    app = testApp({ db: database.db, temporal: temporal.client, taskQueues: uniqueTaskQueues('idp-web'), profile });
  });
  afterAll(async () => {
    await browser?.close();
    await temporal?.close();
    await database?.close();
  });

  it('A27 otto proposes, fiona signs in on Keycloak with password + TOTP and approves; a direct-grant token steps up', async () => {
    const ref = await reviewPayment(database.db, provider, 'idp-web');
    const body = { provider, payment_reference: ref, amount_minor: '250000', currency: 'EUR', reason: 'bank statement line 4' };
    const proposed = await callAs(app, await keycloakToken('otto'), 'POST', '/ledger/adjustments', body);
    expect(proposed.status, proposed.text).toBe(202);
    const path = `/ledger/adjustments/proposals/${proposed.json.id}/approve`;
    // A direct grant records no auth_time: Keycloak cannot say when adam signed in, so he is sent to step-up. (Not
    // fiona's: Keycloak accepts each TOTP code once, and the browser sign-in below uses hers.)
    const direct = await callAs(app, await keycloakToken('adam'), 'POST', path);
    expect(direct.json.error.code).toBe('step_up_required');
    const fiona = await deviceToken(browser, 'fiona');
    const claims = JSON.parse(Buffer.from(fiona.split('.')[1]!, 'base64url').toString()) as {
      amr: string[];
      auth_time: number;
      sub: string;
    };
    expect(claims.sub).toBe(demoPerson('fiona').subject);
    expect(claims.amr).toContain('otp');
    expect(Math.abs(claims.auth_time - Date.now() / 1000)).toBeLessThan(120);
    const approved = await callAs(app, fiona, 'POST', path);
    expect(approved.status, approved.text).toBe(200);
    expect((await ledgerRowsFor(database.db, ref)).length).toBeGreaterThan(0);
  });
});
