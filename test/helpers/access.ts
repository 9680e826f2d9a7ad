// Access test helpers (A1): API keys for each role created through the admin API with the bootstrap token, and a
// request helper that speaks as one of them.
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

export async function callAs(app: Hono<any>, token: string | undefined, method: string, path: string, body?: unknown): Promise<Reply> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
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

/** A key of the given role (merchant keys need their account), created by the bootstrap admin. */
export async function createKey(app: Hono<any>, role: Role, merchantAccount?: string, name = `${role}-key`): Promise<Caller> {
  const res = await callAs(app, TEST_ADMIN_TOKEN, 'POST', '/api-keys', { name, role, ...(merchantAccount ? { merchant_account: merchantAccount } : {}) });
  if (res.status !== 201) throw new Error(`creating a ${role} key answered ${res.status}: ${res.text}`);
  return { token: res.json.token, id: res.json.id, role, merchantAccount: merchantAccount ?? null };
}
