// A25: seeds the stack's Keycloak with the apipay realm (scripts/stack/keycloak-realm.json) through its admin REST API.
// Idempotent: the realm is created when missing, and deleted and created again when the file changed since the last
// seed (KEYCLOAK_STAMP holds the file's hash), so demo people, groups, TOTP secrets and clients match the repository.
// Users have fixed ids, so a person's subject (`sub`) is the same on every machine. Usage:
//   KEYCLOAK_URL=… KEYCLOAK_ADMIN_PASSWORD=… KEYCLOAK_STAMP=file node keycloak-seed.mjs realm.json
/* global fetch, URLSearchParams */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const [file] = process.argv.slice(2);
const base = process.env.KEYCLOAK_URL ?? 'http://127.0.0.1:8180';
const stampFile = process.env.KEYCLOAK_STAMP;
const text = readFileSync(file, 'utf8');
const realm = JSON.parse(text);
const hash = createHash('sha256').update(text).digest('hex');

async function call(method, path, token, body) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  if (!res.ok && res.status !== 404) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.status;
}

const tokenRes = await fetch(`${base}/realms/master/protocol/openid-connect/token`, {
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({
    grant_type: 'password',
    client_id: 'admin-cli',
    username: 'admin',
    password: process.env.KEYCLOAK_ADMIN_PASSWORD ?? '',
  }),
});
if (!tokenRes.ok) throw new Error(`master realm admin sign-in: ${tokenRes.status} ${await tokenRes.text()}`);
const { access_token: token } = await tokenRes.json();

const exists = (await call('GET', `/admin/realms/${realm.realm}`, token)) === 200;
const current = stampFile && existsSync(stampFile) && readFileSync(stampFile, 'utf8').trim() === hash;
if (exists && current) {
  console.log(`[keycloak-seed] realm ${realm.realm} is current`);
} else {
  if (exists) await call('DELETE', `/admin/realms/${realm.realm}`, token);
  await call('POST', '/admin/realms', token, realm);
  if (stampFile) writeFileSync(stampFile, `${hash}\n`);
  console.log(`[keycloak-seed] realm ${realm.realm} ${exists ? 're-seeded (the realm file changed)' : 'created'}`);
}
