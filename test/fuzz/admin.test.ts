// R10 over the admin API (app.request on the real PostgreSQL and Temporal) and the operator CLI driving it: any
// body, query string, path id or command line gets a 2xx or a 4xx in the one error shape — never a 5xx — and a
// refused create leaves no row.
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { COMMANDS } from '../../src/cli/commands.js';
import { createDatabase, type Database } from '../../src/db/client.js';
import { testApp } from '../helpers/app.js';
import { TEST_ADMIN_TOKEN, TEST_DATABASE_URL } from '../helpers/env.js';
import { uniqueMerchant } from '../helpers/outbound.js';
import { connectDevServer, uniqueTaskQueues } from '../helpers/temporal.js';
import { hostileJson, hostileString, runs, timeoutFor } from './fuzz.js';

let database: Database;
let temporal: Awaited<ReturnType<typeof connectDevServer>>;
let app: ReturnType<typeof testApp>;
beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 4 });
  temporal = await connectDevServer();
  app = testApp({ db: database.db, temporal: temporal.client, taskQueues: uniqueTaskQueues('fuzz-admin') });
});
afterAll(async () => {
  await temporal?.close();
  await database?.close();
});

const auth = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

/** A 2xx, or a 4xx with {"error":{code,message}}; the failure message names the request. */
async function expectHandled(response: Response, what: string) {
  const text = await response.text();
  expect(response.status, `${what} → ${response.status} ${text.slice(0, 300)}`).toBeLessThan(500);
  if (response.status >= 400) expect(JSON.parse(text).error, `${what}: error shape`).toMatchObject({ code: expect.any(String), message: expect.any(String) });
  return { status: response.status, text };
}

const LISTS = ['/webhook-endpoints', '/webhook-deliveries', '/reconciliations', '/exports/operator-resolutions.csv'];
const PARAMS = ['limit', 'cursor', 'status', 'state', 'provider', 'merchant_account', 'endpoint_id', 'event_id', 'since', 'until', 'livemode', 'order'];
const query = fc.dictionary(fc.oneof(fc.constantFrom(...PARAMS), hostileString), fc.oneof(hostileString, fc.integer().map(String)), { maxKeys: 4 });
const RESOURCES = ['/webhook-endpoints/', '/webhook-deliveries/', '/events/', '/reconciliations/'];
const SUFFIXES = ['', '/retry', '/disable', '/enable', '/recover', '/secret/rotate', '/resolution'];

describe('R10 admin API and CLI', () => {
  it('R10 list query strings: 200 or a 4xx naming the problem', { timeout: timeoutFor(80, 150) }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...LISTS), query, async (path, params) => {
        const qs = new URLSearchParams(params).toString();
        await expectHandled(await app.request(`/admin/v1${path}?${qs}`, { headers: auth }), `GET ${path}?${qs}`);
      }),
      runs(80),
    );
  });

  it('R10 any id in a path, any method: a 4xx (404, 400, 405), never a 5xx', { timeout: timeoutFor(80, 150) }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...RESOURCES), hostileString.filter((s) => s.length > 0), fc.constantFrom(...SUFFIXES), fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE'), async (resource, id, suffix, method) => {
        // Lone surrogates cannot be percent-encoded: a client sends their UTF-8 replacement.
        const path = `/admin/v1${resource}${encodeURIComponent(Buffer.from(id).toString())}${suffix}`;
        const { status } = await expectHandled(await app.request(path, { method, headers: { ...auth, 'content-type': 'application/json' }, ...(method === 'GET' ? {} : { body: '{}' }) }), `${method} ${path}`);
        expect(status).toBeGreaterThanOrEqual(400);
      }),
      runs(80),
    );
  });

  it('R10 endpoint create bodies: 201 with one row, or a 4xx and no row', { timeout: timeoutFor(80, 200) }, async () => {
    const FIELDS = ['merchant_account', 'url', 'event_types', 'livemode', 'description', 'extra'];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...FIELDS), fc.oneof(hostileJson, fc.constant(undefined)), fc.boolean(), async (field, value, asText) => {
        const marker = uniqueMerchant('fuzz');
        const body: Record<string, unknown> = { merchant_account: marker, url: 'http://127.0.0.1:9/hook', event_types: ['*'], livemode: false };
        if (field === 'merchant_account' && typeof value === 'string') body.url = `http://127.0.0.1:9/${encodeURIComponent(marker)}`;
        if (value === undefined) delete body[field];
        else body[field] = value;
        const raw = asText && typeof value === 'string' ? value : JSON.stringify(body);
        const { status } = await expectHandled(
          await app.request('/admin/v1/webhook-endpoints', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: raw }),
          `POST /webhook-endpoints ${raw.slice(0, 200)}`,
        );
        const [row] = await database.db.execute<{ n: number }>(sql`
          select count(*)::int as n from webhook_endpoints where merchant_account = ${marker} or url = ${`http://127.0.0.1:9/${encodeURIComponent(marker)}`}`);
        expect(row!.n, `rows after ${status}`).toBe(status === 201 || status === 200 ? 1 : 0);
      }),
      runs(80),
    );
  });

  it('R10 CLI command lines against the real admin API: exit 0 or 1 with a JSON error, never a throw or a 5xx', { timeout: timeoutFor(80, 150) }, async () => {
    const words = fc.constantFrom(...COMMANDS.map((c) => c.words));
    const flag = fc.constantFrom('--merchant', '--url', '--events', '--livemode', '--description', '--limit', '--cursor', '--status', '--state', '--decision', '--operator', '--reason', '--since', '--until', '--order', '--amount', '--currency', '--', '-x');
    // process.argv is decoded from the OS's bytes as UTF-8: it never holds a lone surrogate, so neither do these.
    const arg = hostileString.map((s) => Buffer.from(s).toString());
    const argv = fc.tuple(fc.oneof(words, fc.tuple(arg, arg)), fc.array(fc.oneof(flag, arg), { maxLength: 8 }));
    await fc.assert(
      fc.asyncProperty(argv, async ([head, rest]) => {
        const statuses: number[] = [];
        let err = '';
        let out = '';
        const io = {
          env: { ADMIN_TOKEN: TEST_ADMIN_TOKEN, APIPAY_API_URL: 'http://admin.test' },
          fetch: (async (input: string | URL, init?: RequestInit) => {
            const url = new URL(String(input));
            const response = await app.request(`${url.pathname}${url.search}`, init);
            statuses.push(response.status);
            return response;
          }) as typeof fetch,
          stdout: { write: (text: string) => (out += text) },
          stderr: { write: (text: string) => (err += text) },
        };
        const code = await runCli([...head, ...rest], io);
        expect([0, 1], `exit code for ${JSON.stringify([...head, ...rest])}`).toContain(code);
        // Exit 1: a JSON error on stderr, or a check's own report on stdout (`ledger check` finding a problem).
        if (code === 1 && err.trim()) expect(JSON.parse(err.trim().split('\n').pop()!).error.code).toEqual(expect.any(String));
        if (code === 1 && !err.trim()) expect(out.trim(), 'exit 1 with nothing said').not.toBe('');
        expect(statuses.filter((s) => s >= 500), `5xx for ${JSON.stringify([...head, ...rest])}`).toEqual([]);
      }),
      runs(80),
    );
  });
});
