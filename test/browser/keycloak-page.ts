// A27, A30, A32: a person on the stack Keycloak's own login page in Chromium: username, password, then a TOTP code
// made by otplib (waiting for a fresh 30 s period when Keycloak has already seen this one, which it accepts once).
// `deviceConsent` answers the device flow's "Grant access?" question and waits for Keycloak's success message;
// `deviceToken` is the whole device flow of the CLI client: an access token with amr otp and auth_time (a direct
// grant has no auth_time, so only such a token approves, A27).
import type { Browser, Page } from 'playwright-core';
import { generate } from 'otplib';
import { demoPerson, KEYCLOAK_ISSUER } from '../helpers/idp.js';

export async function signInOnKeycloak(page: Page, username: string): Promise<void> {
  const person = demoPerson(username);
  await page.waitForSelector('#username');
  await page.fill('#username', username);
  await page.fill('#password', person.password);
  await page.click('#kc-login');
  for (let attempt = 0; attempt < 3; attempt++) {
    // 60 s, not playwright's 30: a fresh-clone run (7 Dec) timed out here while the suite's first tier loaded the box;
    // a miss now says what Keycloak showed instead (a refused password shows no #otp however long one waits).
    await page
      .locator('#otp')
      .waitFor({ timeout: 60_000 })
      .catch(async (error: Error) => {
        const shown = (await page.textContent('body').catch(() => ''))?.replace(/\s+/g, ' ').slice(0, 300);
        throw new Error(`${error.message.split('\n')[0]}; Keycloak's page ${page.url()} shows: ${shown}`);
      });
    await page.fill('#otp', await generate({ secret: new TextEncoder().encode(person.otpSecret!) }));
    await page.click('#kc-login');
    await page.waitForLoadState('load');
    if (!page.url().startsWith(KEYCLOAK_ISSUER) || !(await page.locator('#otp').count())) return;
    await new Promise((resolve) => setTimeout(resolve, 30_000 - (Date.now() % 30_000) + 500)); // the code was used
  }
  throw new Error(`Keycloak kept ${username} on its page: ${page.url()}`);
}

export async function deviceConsent(page: Page): Promise<void> {
  await page
    .getByText(/success|grant access/i)
    .first()
    .waitFor({ timeout: 15_000 });
  const yes = page.getByRole('button', { name: 'Yes' });
  if (await yes.count()) {
    await yes.click();
    await page
      .getByText(/success/i)
      .first()
      .waitFor({ timeout: 15_000 });
  }
}

/** The device flow (client apipay-cli): Keycloak's page in Chromium with the password and a TOTP code, then the token. */
export async function deviceToken(browser: Browser, username: string): Promise<string> {
  const endpoint = `${KEYCLOAK_ISSUER}/protocol/openid-connect`;
  const started = (await (
    await fetch(`${endpoint}/auth/device`, {
      method: 'POST',
      body: new URLSearchParams({ client_id: 'apipay-cli', scope: 'openid' }),
    })
  ).json()) as { device_code: string; verification_uri_complete: string };
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(started.verification_uri_complete);
    await signInOnKeycloak(page, username);
    await deviceConsent(page); // the device grant asks for consent, then Keycloak says it succeeded
  } finally {
    await context.close();
  }
  for (let i = 0; i < 20; i++) {
    const res = await fetch(`${endpoint}/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        client_id: 'apipay-cli',
        device_code: started.device_code,
      }),
    });
    const body = (await res.json()) as { access_token?: string; error?: string };
    if (body.access_token) return body.access_token;
    if (body.error !== 'authorization_pending' && body.error !== 'slow_down')
      throw new Error(`device token: ${JSON.stringify(body)}`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  throw new Error('device flow: no token');
}
