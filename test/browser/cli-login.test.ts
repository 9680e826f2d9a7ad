// A32 with the stack's real Keycloak: `apipay login` (the CLI's engine, runCli) starts the device flow and prints
// Keycloak's page; a person signs in there in Chromium (password + TOTP) and grants access; the CLI keeps the access
// token in its config file (mode 0600, never on stdout or stderr) and the admin API takes it as that person. A
// declined grant and a missing issuer are clear errors. APIPAY_IDP=0 skips this.
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../../src/cli/run.js';
import { callAs } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { demoPerson, IDP_AUDIENCE, IDP_ROLES, KEYCLOAK_ENABLED, KEYCLOAK_ISSUER } from '../helpers/idp.js';
import { testProfile } from '../helpers/profile.js';
import { lazyTemporal, uniqueTaskQueues } from '../helpers/temporal.js';
import { useWorld } from '../helpers/world.js';
import { deviceConsent, signInOnKeycloak } from './keycloak-page.js';
import { CHROMIUM } from './world.js';

const world = useWorld({ label: 'cli-login' });
let browser: Browser;

function cliIo(env: Record<string, string>) {
  const out = { stdout: '', stderr: '' };
  const io: CliIo = {
    env,
    fetch,
    stdout: { write: (text: string) => (out.stdout += text) },
    stderr: { write: (text: string) => (out.stderr += text) },
  };
  return { io, out };
}

describe.skipIf(!KEYCLOAK_ENABLED)('A32 apipay login by the device flow (APIPAY_IDP=0 skips this)', () => {
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  afterAll(async () => browser?.close());

  it(
    'A32 adam signs in on Keycloak; the token lands in the config file only, and the admin API knows him',
    { timeout: 180_000 },
    async () => {
      const config = join(mkdtempSync(join(tmpdir(), 'apipay-login-')), 'apipay', 'config.json');
      const { io, out } = cliIo({ APIPAY_CONFIG: config });
      const login = runCli(['login', '--issuer', KEYCLOAK_ISSUER], io);
      for (let i = 0; i < 100 && !/open (\S+)/.test(out.stderr); i++) await new Promise((r) => setTimeout(r, 100));
      const page = await (await browser.newContext()).newPage();
      await page.goto(/open (\S+)/.exec(out.stderr)![1]!);
      await signInOnKeycloak(page, 'adam');
      await deviceConsent(page);
      expect(await login, out.stderr).toBe(0);
      const file = JSON.parse(readFileSync(config, 'utf8')) as { access_token: string; issuer: string };
      expect(file.issuer).toBe(KEYCLOAK_ISSUER);
      expect(statSync(config).mode & 0o777).toBe(0o600);
      expect(out.stdout).not.toContain(file.access_token);
      expect(out.stderr).not.toContain(file.access_token);
      expect(JSON.parse(out.stdout)).toMatchObject({ subject: demoPerson('adam').subject, issuer: KEYCLOAK_ISSUER, config });

      const app = testApp({
        db: world.database.db,
        temporal: lazyTemporal(),
        taskQueues: uniqueTaskQueues('cli-login'),
        profile: testProfile({ idp: { issuer: KEYCLOAK_ISSUER, audience: IDP_AUDIENCE, roles: IDP_ROLES } }),
      });
      const me = await callAs(app, file.access_token, 'GET', '/reconciliations?limit=1');
      expect(me.status, me.text).toBe(200);
    },
  );

  it('A32 without an issuer, or with one that does not answer, login says so and writes nothing', async () => {
    const config = join(mkdtempSync(join(tmpdir(), 'apipay-login-')), 'config.json');
    const none = cliIo({ APIPAY_CONFIG: config });
    expect(await runCli(['login'], none.io)).toBe(1);
    expect(none.out.stderr).toMatch(/"code":"usage".*--issuer URL/);
    const down = cliIo({ APIPAY_CONFIG: config });
    expect(await runCli(['login', '--issuer', 'http://127.0.0.1:9/realms/x'], down.io)).toBe(1);
    expect(down.out.stderr).toMatch(/"code":"unavailable".*sign-in through http:\/\/127\.0\.0\.1:9\/realms\/x failed/);
    expect(() => statSync(config)).toThrow();
  });
});
