// C6: error answers never show server file paths, stack frames or the text of an internal error, whatever fails:
// bad JSON, bad fields, unknown routes and parameters, and a store that throws an error naming a source file.
import { Client, Connection } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/client.js';
import { testApp } from '../helpers/app.js';
import { TEST_ADMIN_TOKEN } from '../helpers/env.js';
import { uniqueTaskQueues } from '../helpers/temporal.js';

const SERVER_PATH = /(\/(work|home|root|usr|opt|app|srv|tmp)\/|node_modules|\bsrc\/[\w/-]+\.(ts|js)|\.ts:\d+|\bat [\w.<>]+ \()/;

/** A store whose every query fails the way a driver or a bug does: with an error naming a file on this server. */
const failing = new Proxy(
  {},
  {
    get: () => () => {
      const error = new Error('connect ECONNREFUSED at /work/wt/apipay/src/db/client.ts:42:7');
      error.stack = `Error: boom\n    at query (/work/wt/apipay/node_modules/postgres/src/connection.js:790:26)`;
      throw error;
    },
  },
) as unknown as Db;
const temporal = new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) });
const app = testApp({ db: failing, temporal, taskQueues: uniqueTaskQueues('error-answers') });
const auth = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

describe('C6 no server paths in error answers', () => {
  it.each<[string, string, RequestInit]>([
    ['a store failure (500)', '/admin/v1/webhook-endpoints/we_01jd2m3k4n5p6q7r8s9t0v1w2x', { headers: auth }],
    ['a failure inside a list (500)', '/admin/v1/reconciliations?state=manual_review', { headers: auth }],
    [
      'malformed JSON',
      '/admin/v1/webhook-endpoints',
      { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"url":' },
    ],
    [
      'a bad field',
      '/admin/v1/webhook-endpoints',
      { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"url":"x"}' },
    ],
    ['an unknown query parameter', '/admin/v1/webhook-deliveries?src=/etc/passwd', { headers: auth }],
    ['an unknown route', '/admin/v1/nothing-here', { headers: auth }],
    ['no token', '/admin/v1/webhook-endpoints', {}],
    ['an unknown provider', '/webhooks/nope', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }],
  ])('C6 %s: our error shape, no file path or stack frame', async (_what, path, init) => {
    const res = await app.request(path, init);
    expect(res.status).toBeGreaterThanOrEqual(400);
    const text = await res.text();
    expect(JSON.parse(text)).toHaveProperty('error.code');
    expect(text).not.toMatch(SERVER_PATH);
    expect(text).not.toContain('ECONNREFUSED');
  });
});
