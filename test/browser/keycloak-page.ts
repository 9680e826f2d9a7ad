// A27, A30, A32: a person on the stack Keycloak's own login page in Chromium: username, password, then a TOTP code
// made by otplib (waiting for a fresh 30 s period when Keycloak has already seen this one, which it accepts once).
// `deviceConsent` answers the device flow's "Grant access?" question and waits for Keycloak's success message.
import type { Page } from 'playwright-core';
import { generate } from 'otplib';
import { demoPerson, KEYCLOAK_ISSUER } from '../helpers/idp.js';

export async function signInOnKeycloak(page: Page, username: string): Promise<void> {
  const person = demoPerson(username);
  await page.waitForSelector('#username');
  await page.fill('#username', username);
  await page.fill('#password', person.password);
  await page.click('#kc-login');
  for (let attempt = 0; attempt < 3; attempt++) {
    await page.waitForSelector('#otp');
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
