// A26: the admin API accepts the identity provider's access tokens, verified against the issuer's JWKS (jose):
// another issuer's token, an expired one, one signed by a key the IdP rotated out, one with `alg: none` and one
// signed with HMAC are 401; a valid token works with the role its groups map to; a person of the stack's real
// Keycloak (password + TOTP) is an IdP subject whose audit rows name them. Real PostgreSQL; real HTTP to the issuers.
// A29: an issuer on a closed port: a JWT is 503 with Retry-After, API keys keep working, a log line and a metric say so.
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { auditEvents } from '../../src/db/schema/index.js';
import { registry } from '../../src/metrics/registry.js';
import { callAs, setUpAdminToken } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { TEST_DATABASE_URL } from '../helpers/env.js';
import {
  demoPerson,
  IDP_AUDIENCE,
  IDP_ROLES,
  KEYCLOAK_ENABLED,
  KEYCLOAK_ISSUER,
  keycloakToken,
  startLocalIssuer,
  unsignedToken,
  type LocalIssuer,
} from '../helpers/idp.js';
import { testProfile } from '../helpers/profile.js';
import { connectDevServer, uniqueTaskQueues } from '../helpers/temporal.js';
import { adjustmentProfile, reviewPayment } from '../helpers/adjustments.js';
import { capturedLogger, freePort } from '../helpers/capture.js';

let database: Database;
let temporal: Awaited<ReturnType<typeof connectDevServer>>;
let issuer: LocalIssuer;
let stranger: LocalIssuer;
const provider = `idp-${randomUUID().slice(0, 6)}`;

const appFor = (idp: Record<string, unknown>) =>
  testApp({
    db: database.db,
    temporal: temporal.client,
    taskQueues: uniqueTaskQueues('idp-tokens'),
    profile: adjustmentProfile(provider, { idp }),
  });
let app: ReturnType<typeof testApp>;

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 2 });
  temporal = await connectDevServer();
  issuer = await startLocalIssuer();
  stranger = await startLocalIssuer();
  app = appFor(issuer.profile);
});
afterAll(async () => {
  await issuer?.close();
  await stranger?.close();
  await temporal?.close();
  await database?.close();
});

const payment = () => reviewPayment(database.db, provider, 'idp');
const adjustment = (ref: string) => ({
  provider,
  payment_reference: ref,
  amount_minor: '10',
  currency: 'EUR',
  reason: 'statement line 7',
});

describe('A26 identity provider tokens on the admin API', () => {
  it('A26 a valid token is the IdP subject with the role its groups map to', async () => {
    const viewer = await issuer.mint(`v-${randomUUID()}`, { groups: ['viewer'] });
    expect((await callAs(app, viewer, 'GET', '/audit-events?limit=1')).status).toBe(200);
    expect((await callAs(app, viewer, 'POST', '/ledger/adjustments', adjustment(await payment()))).status).toBe(403);
    const sub = `o-${randomUUID()}`;
    const operator = await issuer.mint(sub, { groups: ['/finance-approver'], name: 'Olive Op', email: 'olive@example.com' });
    const ref = await payment();
    const posted = await callAs(app, operator, 'POST', '/ledger/adjustments', adjustment(ref));
    expect(posted.status).toBe(201);
    const [row] = await database.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.action, 'ledger.adjust'), eq(auditEvents.targetId, posted.json.id)));
    // A26: the audit row names the subject (iss + sub) and the person the IdP named.
    expect(row).toMatchObject({
      actorKeyId: `idp:${sub}@${issuer.issuer}`,
      actorName: 'Olive Op',
      actorPerson: 'Olive Op',
      actorRole: 'operator',
    });
    // A group that maps to no ApiPay role gives none.
    const nobody = await issuer.mint(`n-${randomUUID()}`, { groups: ['marketing'] });
    const refused = await callAs(app, nobody, 'GET', '/audit-events?limit=1');
    expect(refused.status).toBe(401);
    expect(refused.json.error.message).toMatch(/maps to an ApiPay role/);
  });

  it('A26 another issuer, an expired token, a wrong audience, alg none and HMAC are 401', async () => {
    const sub = `x-${randomUUID()}`;
    expect((await callAs(app, await issuer.mint(sub), 'GET', '/audit-events?limit=1')).status).toBe(200);
    const fromStranger = await stranger.mint(sub);
    expect((await callAs(app, fromStranger, 'GET', '/audit-events?limit=1')).status).toBe(401);
    const expired = await issuer.mint(sub, { exp: Math.floor(Date.now() / 1000) - 60 });
    const answer = await callAs(app, expired, 'GET', '/audit-events?limit=1');
    expect(answer.status).toBe(401);
    expect(answer.json.error.message).toMatch(/ERR_JWT_EXPIRED/);
    expect((await callAs(app, await issuer.mint(sub, { aud: 'someone-else' }), 'GET', '/audit-events?limit=1')).status).toBe(401);
    expect((await callAs(app, unsignedToken(issuer.issuer, sub), 'GET', '/audit-events?limit=1')).status).toBe(401);
    const hmac = await new SignJWT({ groups: ['admin'] })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(issuer.issuer)
      .setAudience(IDP_AUDIENCE)
      .setSubject(sub)
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode('a shared secret is no proof of the IdP'));
    expect((await callAs(app, hmac, 'GET', '/audit-events?limit=1')).status).toBe(401);
  });

  it('A26 a key the IdP rotated out verifies nothing; the new key is fetched without a restart', async () => {
    const local = await startLocalIssuer();
    const rotating = appFor(local.profile);
    try {
      const before = await local.mint(`r-${randomUUID()}`);
      expect((await callAs(rotating, before, 'GET', '/audit-events?limit=1')).status).toBe(200);
      await local.rotate();
      await new Promise((resolve) => setTimeout(resolve, 1200)); // past idp.jwks_cache_max_age (1s here)
      expect((await callAs(rotating, before, 'GET', '/audit-events?limit=1')).status).toBe(401);
      const after = await local.mint(`r-${randomUUID()}`);
      expect((await callAs(rotating, after, 'GET', '/audit-events?limit=1')).status).toBe(200);
    } finally {
      await local.close();
    }
  });

  it('A26 without an idp block a JWT is no credential', async () => {
    const plain = testApp({ db: database.db, temporal: temporal.client, taskQueues: uniqueTaskQueues('idp-none') });
    expect((await callAs(plain, await issuer.mint(`p-${randomUUID()}`), 'GET', '/audit-events?limit=1')).status).toBe(401);
  });
});

const unreachableCount = async () =>
  (await registry.getSingleMetric('apipay_idp_unreachable_total')?.get())?.values[0]?.value ?? 0;

describe('A29 an identity provider that cannot be reached', () => {
  it('A29 a JWT is 503 with Retry-After (not 401, not 500); API keys work; one log line and the metric say the IdP is down', async () => {
    const dead = `http://127.0.0.1:${await freePort()}/realms/apipay`;
    const { logger, lines } = capturedLogger('test', 'warn');
    const down = testApp({
      db: database.db,
      temporal: temporal.client,
      taskQueues: uniqueTaskQueues('idp-down'),
      logger,
      profile: testProfile({ idp: { issuer: dead, audience: IDP_AUDIENCE, roles: IDP_ROLES } }),
    });
    const { privateKey } = await generateKeyPair('RS256');
    const token = await new SignJWT({ groups: ['operator'] })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(dead)
      .setAudience(IDP_AUDIENCE)
      .setSubject(`d-${randomUUID()}`)
      .setExpirationTime('5m')
      .sign(privateKey);
    const before = await unreachableCount();

    const first = await callAs(down, token, 'GET', '/audit-events?limit=1');
    expect(first.status).toBe(503);
    expect(first.json.error.code).toBe('unavailable');
    expect(first.json.error.message).toMatch(/identity provider cannot be reached/);
    expect(Number(first.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Within the retry window the verifier does not ask again: the same answer, no second log line or count.
    const second = await callAs(down, token, 'POST', '/ledger/adjustments', adjustment(await payment()));
    expect(second.status).toBe(503);
    expect(await unreachableCount()).toBe(before + 1);
    const warnings = lines.filter((line) => line.includes('identity provider unreachable'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(dead);
    expect(lines.join('')).not.toContain(token.split('.')[1]!);

    // Another issuer's token is still a 401 (refused on its face), and an API key does not depend on the IdP.
    expect((await callAs(down, await stranger.mint('s'), 'GET', '/audit-events?limit=1')).status).toBe(401);
    const key = await setUpAdminToken(down);
    expect((await callAs(down, key, 'GET', '/audit-events?limit=1')).status).toBe(200);
  });
});

describe.skipIf(!KEYCLOAK_ENABLED)('A25/A26 the stack Keycloak (APIPAY_IDP=0 skips this)', () => {
  const keycloakApp = () => appFor({ issuer: KEYCLOAK_ISSUER, audience: IDP_AUDIENCE, roles: IDP_ROLES });

  it('A26 a real operator token (password + TOTP) works; a viewer is a viewer; amr carries the second factor', async () => {
    const kc = keycloakApp();
    const otto = await keycloakToken('otto');
    const claims = JSON.parse(Buffer.from(otto.split('.')[1]!, 'base64url').toString()) as {
      amr: string[];
      sub: string;
      iss: string;
    };
    expect(claims).toMatchObject({ iss: KEYCLOAK_ISSUER, sub: demoPerson('otto').subject });
    expect(claims.amr).toContain('otp');
    const ref = await payment();
    const posted = await callAs(kc, otto, 'POST', '/ledger/adjustments', adjustment(ref));
    expect(posted.status).toBe(201);
    const [row] = await database.db.select().from(auditEvents).where(eq(auditEvents.targetId, posted.json.id));
    expect(row).toMatchObject({
      actorKeyId: `idp:${demoPerson('otto').subject}@${KEYCLOAK_ISSUER}`,
      actorPerson: 'Otto Operator',
    });
    const vera = await keycloakToken('vera');
    expect((await callAs(kc, vera, 'GET', '/audit-events?limit=1')).status).toBe(200);
    expect((await callAs(kc, vera, 'POST', '/ledger/adjustments', adjustment(await payment()))).status).toBe(403);
  });
});
