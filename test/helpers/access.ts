// Access test helpers (A1): API keys for each role created through the admin API (A12: the bootstrap token creates
// one admin key per app, which creates the others), and a request helper that speaks as one of them.
import { randomUUID } from 'node:crypto';
import type { Hono } from 'hono';
import type { Role } from '../../src/access/roles.js';
import { TEST_ADMIN_TOKEN } from './env.js';

export type Caller = { token: string; id: string; role: Role; merchantAccount: string | null };

export interface Reply {
  status: number;
  text: string;
  json: any;
  headers: Headers;
}

export async function callAs(
  app: Hono<any>,
  token: string | undefined,
  method: string,
  path: string,
  body?: unknown,
  extraHeaders: Record<string, string> = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...extraHeaders, ...(token ? { authorization: `Bearer ${token}` } : {}) };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await app.request(`/admin/v1${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined; // CSV
  }
  return { status: res.status, text, json, headers: res.headers };
}

/**
 * A3, A24: a request as `who` with an X-Request-Id of the test's own, so the audit row can be matched to it; the
 * reply carries that id (`requestId`) and the server's own (`serverRequestId`).
 */
export async function callWithRequestId(app: Hono<any>, who: Caller, method: string, path: string, body?: unknown) {
  const requestId = `req-${randomUUID()}`;
  const reply = await callAs(app, who.token, method, path, body, { 'x-request-id': requestId });
  return { ...reply, requestId, serverRequestId: reply.headers.get('x-request-id') };
}

/** A12: the admin key (a person of its own) the bootstrap token creates once per app; it creates the other keys. */
const setUpAdmins = new WeakMap<object, Promise<string>>();
export function setUpAdminToken(app: Hono<any>): Promise<string> {
  let made = setUpAdmins.get(app);
  if (!made) {
    const name = `setup-admin-${Math.random().toString(36).slice(2, 10)}`;
    made = callAs(app, TEST_ADMIN_TOKEN, 'POST', '/api-keys', { name, role: 'admin' }).then((res) => {
      if (res.status !== 201) throw new Error(`creating the set-up admin key answered ${res.status}: ${res.text}`);
      return res.json.token as string;
    });
    setUpAdmins.set(app, made);
  }
  return made;
}

/** A key of the given role (merchant keys need their account), made by the set-up admin (admin keys: by bootstrap). */
export async function createKey(
  app: Hono<any>,
  role: Role,
  merchantAccount?: string,
  name = `${role}-key`,
  person?: string,
  kind?: 'human' | 'service',
): Promise<Caller> {
  const maker = role === 'admin' ? TEST_ADMIN_TOKEN : await setUpAdminToken(app);
  // Each key its own person unless `person` says otherwise: tests sharing one database never share a person's budget.
  const who = person ?? `${name}-${Math.random().toString(36).slice(2, 10)}`;
  const res = await callAs(app, maker, 'POST', '/api-keys', {
    name,
    role,
    person: who,
    ...(kind ? { kind } : {}),
    ...(merchantAccount ? { merchant_account: merchantAccount } : {}),
  });
  if (res.status !== 201) throw new Error(`creating a ${role} key answered ${res.status}: ${res.text}`);
  return { token: res.json.token, id: res.json.id, role, merchantAccount: merchantAccount ?? null };
}
