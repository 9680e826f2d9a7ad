// requirements §4 CLI: every command maps to its admin API request; output is JSON (CSV for exports); errors are
// {"error":{code,message}} on stderr with exit code 1. The admin API peer is a fake fetch.
import { describe, expect, it } from 'vitest';
import { helpText, runCli } from '../../src/cli/run.js';

interface Seen {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: unknown;
}

function harness(reply: (seen: Seen) => Response = () => Response.json({ ok: 1 }), env: Record<string, string | undefined> = {}) {
  const seen: Seen[] = [];
  let out = '';
  let err = '';
  const fakeFetch = (async (input: string | URL, init?: RequestInit) => {
    const s: Seen = {
      url: new URL(String(input)),
      method: init?.method ?? 'GET',
      headers: Object.fromEntries(Object.entries((init?.headers ?? {}) as Record<string, string>)),
      body: init?.body ? JSON.parse(String(init.body)) : undefined,
    };
    seen.push(s);
    return reply(s);
  }) as typeof fetch;
  const io = {
    env: { ADMIN_TOKEN: 'cli-test-token-0123456789', ...env } as Record<string, string | undefined>,
    fetch: fakeFetch,
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: (t: string) => (err += t) },
  };
  return { io, seen, out: () => out, err: () => err };
}

const cases: Array<[string[], string, string, Record<string, string>, unknown]> = [
  [['endpoints', 'create', '--merchant', 'acct_1', '--url', 'https://m.example/h', '--events', 'payment.succeeded, refund.created', '--livemode', '--description', 'shop'], 'POST', '/admin/v1/webhook-endpoints', {}, { merchant_account: 'acct_1', url: 'https://m.example/h', event_types: ['payment.succeeded', 'refund.created'], livemode: true, description: 'shop' }],
  [['endpoints', 'create', '--merchant', 'acct_1', '--url', 'https://m.example/h', '--events', '*'], 'POST', '/admin/v1/webhook-endpoints', {}, { merchant_account: 'acct_1', url: 'https://m.example/h', event_types: ['*'], livemode: false }],
  [['endpoints', 'list', '--merchant', 'acct_1', '--limit', '5', '--cursor', 'abc'], 'GET', '/admin/v1/webhook-endpoints', { merchant_account: 'acct_1', limit: '5', cursor: 'abc' }, undefined],
  [['endpoints', 'get', 'we_1'], 'GET', '/admin/v1/webhook-endpoints/we_1', {}, undefined],
  [['endpoints', 'update', 'we_1', '--events', 'a.b'], 'PATCH', '/admin/v1/webhook-endpoints/we_1', {}, { event_types: ['a.b'] }],
  [['endpoints', 'update', 'we_1', '--ordering', 'per_endpoint', '--rate-limit', '10'], 'PATCH', '/admin/v1/webhook-endpoints/we_1', {}, { ordering: 'per_endpoint', rate_limit_per_second: 10 }],
  [['endpoints', 'update', 'we_1', '--rate-limit', 'none'], 'PATCH', '/admin/v1/webhook-endpoints/we_1', {}, { rate_limit_per_second: null }],
  [['deliveries', 'skip', 'whd_1', '--operator', 'ana'], 'POST', '/admin/v1/webhook-deliveries/whd_1/skip', {}, { operator: 'ana' }],
  [['endpoints', 'disable', 'we_1', '--reason', 'merchant asked'], 'POST', '/admin/v1/webhook-endpoints/we_1/disable', {}, { reason: 'merchant asked' }],
  [['endpoints', 'enable', 'we_1'], 'POST', '/admin/v1/webhook-endpoints/we_1/enable', {}, undefined],
  [['endpoints', 'rotate-secret', 'we_1'], 'POST', '/admin/v1/webhook-endpoints/we_1/secret/rotate', {}, undefined],
  [['endpoints', 'recover', 'we_1', '--since', '2026-12-01T00:00:00Z', '--operator', 'ana'], 'POST', '/admin/v1/webhook-endpoints/we_1/recover', {}, { since: '2026-12-01T00:00:00Z', operator: 'ana' }],
  [['endpoints', 'delete', 'we_1'], 'DELETE', '/admin/v1/webhook-endpoints/we_1', {}, undefined],
  [['endpoints', 'test', 'we_1'], 'POST', '/admin/v1/webhook-endpoints/we_1/test', {}, undefined],
  [['endpoints', 'status-changes', '--endpoint', 'we_1', '--to', 'DISABLED', '--limit', '5'], 'GET', '/admin/v1/endpoint-status-changes', { endpoint_id: 'we_1', to_status: 'disabled', limit: '5' }, undefined],
  [['deliveries', 'list', '--status', 'FAILED', '--endpoint', 'we_1', '--event', 'evt_1'], 'GET', '/admin/v1/webhook-deliveries', { status: 'FAILED', endpoint_id: 'we_1', event_id: 'evt_1' }, undefined],
  [['deliveries', 'get', 'whd_1'], 'GET', '/admin/v1/webhook-deliveries/whd_1', {}, undefined],
  [['deliveries', 'retry', 'whd_1', '--operator', 'ana', '--reason', 'fixed'], 'POST', '/admin/v1/webhook-deliveries/whd_1/retry', {}, { operator: 'ana', reason: 'fixed' }],
  [['events', 'get', 'evt_1'], 'GET', '/admin/v1/events/evt_1', {}, undefined],
  [['events', 'expunge', 'evt_1', '--reason', 'GDPR request 42'], 'POST', '/admin/v1/events/evt_1/expunge', {}, { reason: 'GDPR request 42' }],
  [['endpoints', 'update', 'we_1', '--scheme', 'standard', '--ed25519', 'on'], 'PATCH', '/admin/v1/webhook-endpoints/we_1', {}, { signature_scheme: 'standard', ed25519_signing: true }],
  [['reconciliations', 'list', '--state', 'manual_review', '--provider', 'sandbox-stripe'], 'GET', '/admin/v1/reconciliations', { state: 'manual_review', provider: 'sandbox-stripe' }, undefined],
  [['reconciliations', 'get', 'reconcile:sandbox-stripe:evt_9'], 'GET', '/admin/v1/reconciliations/reconcile%3Asandbox-stripe%3Aevt_9', {}, undefined],
  [['keys', 'create', '--role', 'operator', '--name', 'alice'], 'POST', '/admin/v1/api-keys', {}, { name: 'alice', role: 'operator' }],
  [['keys', 'create', '--role', 'merchant', '--name', 'shop', '--merchant', 'acct_1'], 'POST', '/admin/v1/api-keys', {}, { name: 'shop', role: 'merchant', merchant_account: 'acct_1' }],
  [['keys', 'list', '--include-revoked', '--limit', '5'], 'GET', '/admin/v1/api-keys', { include_revoked: 'true', limit: '5' }, undefined],
  [['keys', 'revoke', 'apk_01jd2m3k4n5p6q7r8s9t0v1w2x'], 'POST', '/admin/v1/api-keys/apk_01jd2m3k4n5p6q7r8s9t0v1w2x/revoke', {}, undefined],
  [['secrets', 'reencrypt'], 'POST', '/admin/v1/secrets/reencrypt', {}, undefined],
  [['reconciliations', 'resolve', 'r1', '--decision', 'applied', '--operator', 'ana', '--reason', 'bank confirmed'], 'POST', '/admin/v1/reconciliations/r1/resolution', {}, { decision: 'applied', operator: 'ana', reason: 'bank confirmed' }],
  [['reconciliations', 'resolve', 'r1', '--decision', 'applied', '--operator', 'ana', '--reason', 'r', '--post', 'webhook'], 'POST', '/admin/v1/reconciliations/r1/resolution', {}, { decision: 'applied', operator: 'ana', reason: 'r', post: 'webhook' }],
  [['reconciliations', 'resolve', 'r1', '--decision', 'applied', '--operator', 'ana', '--reason', 'r', '--amount', '1400', '--currency', 'USD'], 'POST', '/admin/v1/reconciliations/r1/resolution', {}, { decision: 'applied', operator: 'ana', reason: 'r', post: { amount_minor: '1400', currency: 'USD' } }],
  [['reconciliations', 'resolve', 'r1', '--decision', 'acknowledged', '--operator', 'ana', '--reason', 'adjusted'], 'POST', '/admin/v1/reconciliations/r1/resolution', {}, { decision: 'acknowledged', operator: 'ana', reason: 'adjusted' }],
  // A2: the operator is the API key; --operator is no longer needed.
  [['reconciliations', 'resolve', 'r1', '--decision', 'rejected', '--reason', 'duplicate'], 'POST', '/admin/v1/reconciliations/r1/resolution', {}, { decision: 'rejected', reason: 'duplicate' }],
  [['ledger', 'adjust', '--provider', 'p', '--payment', 'pay_1', '--amount', '25', '--currency', 'EUR', '--reason', 'fee'], 'POST', '/admin/v1/ledger/adjustments', {}, { provider: 'p', payment_reference: 'pay_1', amount_minor: '25', currency: 'EUR', reason: 'fee' }],
  [['audit', 'list', '--actor', 'alice', '--action', 'endpoint.update', '--since', '2026-12-01', '--order', 'DESC', '--limit', '5'], 'GET', '/admin/v1/audit-events', { actor: 'alice', action: 'endpoint.update', from: '2026-12-01T00:00:00Z', order: 'desc', limit: '5' }, undefined],
  [['audit', 'list', '--target-type', 'webhook_endpoint', '--target-id', 'we_1', '--until', '2026-12-02'], 'GET', '/admin/v1/audit-events', { target_type: 'webhook_endpoint', target_id: 'we_1', to: '2026-12-02T00:00:00Z' }, undefined],
  [['ledger', 'adjust', '--provider', 'p', '--payment', 'pay_1', '--amount=-50', '--currency', 'EUR', '--operator', 'ana', '--reason', 'fee', '--reconciliation', 'reconcile:p:e'], 'POST', '/admin/v1/ledger/adjustments', {}, { provider: 'p', payment_reference: 'pay_1', amount_minor: '-50', currency: 'EUR', operator: 'ana', reason: 'fee', reconciliation_id: 'reconcile:p:e' }],
  [['ledger', 'check', '--provider', 'p'], 'GET', '/admin/v1/ledger/check', { provider: 'p' }, undefined],
  // C9: any case for statuses and states, `show` for `get`, plain dates, order/since/until/limit on every list.
  [['deliveries', 'list', '--status', 'failed', '--order', 'DESC', '--since', '2026-12-01', '--until', '2026-12-02T06:00:00+01:00', '--limit', '5'], 'GET', '/admin/v1/webhook-deliveries', { status: 'FAILED', order: 'desc', from: '2026-12-01T00:00:00Z', to: '2026-12-02T06:00:00+01:00', limit: '5' }, undefined],
  // C4: search by what the operator has in hand.
  [['deliveries', 'list', '--payment-reference', 'pi_42', '--merchant', 'acct_1', '--event-type', 'payment.succeeded'], 'GET', '/admin/v1/webhook-deliveries', { payment_reference: 'pi_42', merchant_account: 'acct_1', event_type: 'payment.succeeded' }, undefined],
  [['reconciliations', 'list', '--payment-reference', 'pi_42', '--provider-event', 'evt_9'], 'GET', '/admin/v1/reconciliations', { payment_reference: 'pi_42', provider_event_id: 'evt_9' }, undefined],
  [['reconciliations', 'list', '--state', 'MANUAL_REVIEW', '--order', 'desc', '--since', '2026-11-30'], 'GET', '/admin/v1/reconciliations', { state: 'manual_review', order: 'desc', from: '2026-11-30T00:00:00Z' }, undefined],
  [['endpoints', 'list', '--order', 'asc', '--until', '2026-12-01', '--limit', '3'], 'GET', '/admin/v1/webhook-endpoints', { order: 'asc', to: '2026-12-01T00:00:00Z', limit: '3' }, undefined],
  [['deliveries', 'show', 'whd_1'], 'GET', '/admin/v1/webhook-deliveries/whd_1', {}, undefined],
  [['Endpoints', 'SHOW', 'we_1'], 'GET', '/admin/v1/webhook-endpoints/we_1', {}, undefined],
  [['reconciliations', 'show', 'r1'], 'GET', '/admin/v1/reconciliations/r1', {}, undefined],
  [['events', 'show', 'evt_1'], 'GET', '/admin/v1/events/evt_1', {}, undefined],
  [['endpoints', 'recover', 'we_1', '--since', '2026-12-01'], 'POST', '/admin/v1/webhook-endpoints/we_1/recover', {}, { since: '2026-12-01T00:00:00Z' }],
  [['ledger', 'check', '--from', '2026-11-01', '--to', '2026-12-01'], 'GET', '/admin/v1/ledger/check', { from: '2026-11-01T00:00:00Z', to: '2026-12-01T00:00:00Z' }, undefined],
  [['reconciliations', 'resolve', 'r1', '--decision', 'Applied', '--operator', 'ana', '--reason', 'ok'], 'POST', '/admin/v1/reconciliations/r1/resolution', {}, { decision: 'applied', operator: 'ana', reason: 'ok' }],
];

describe('apipay CLI', () => {
  it.each(cases)('§4 %j → its admin API request', async (argv, method, path, query, body) => {
    const h = harness();
    expect(await runCli(argv, h.io)).toBe(0);
    expect(h.seen).toHaveLength(1);
    const [s] = h.seen;
    expect(s!.method).toBe(method);
    expect(s!.url.origin).toBe('http://127.0.0.1:3000');
    expect(s!.url.pathname).toBe(path);
    expect(Object.fromEntries(s!.url.searchParams)).toEqual(query);
    expect(s!.body).toEqual(body);
    expect(s!.headers.authorization).toBe('Bearer cli-test-token-0123456789');
    expect(JSON.parse(h.out())).toEqual({ ok: 1 });
    expect(h.err()).toBe('');
  });

  it('§4 APIPAY_API_URL chooses the server', async () => {
    const h = harness(undefined, { APIPAY_API_URL: 'https://admin.apipay.test:8443/' });
    await runCli(['endpoints', 'get', 'we_1'], h.io);
    expect(h.seen[0]!.url.toString()).toBe('https://admin.apipay.test:8443/admin/v1/webhook-endpoints/we_1');
  });

  it('I11 exports resolutions prints the CSV as it is', async () => {
    const csv = 'resolution_id,decision\nopr_1,applied\n';
    const h = harness(() => new Response(csv, { headers: { 'content-type': 'text/csv' } }));
    expect(await runCli(['exports', 'resolutions', '--from', '2026-11-01T00:00:00Z', '--to', '2026-12-01T00:00:00Z'], h.io)).toBe(0);
    expect(h.seen[0]!.url.pathname).toBe('/admin/v1/exports/operator-resolutions.csv');
    expect(Object.fromEntries(h.seen[0]!.url.searchParams)).toEqual({ from: '2026-11-01T00:00:00Z', to: '2026-12-01T00:00:00Z' });
    expect(h.out()).toBe(csv);
    const all = harness(() => new Response(csv));
    expect(await runCli(['exports', 'resolutions'], all.io)).toBe(0);
    expect([...all.seen[0]!.url.searchParams]).toEqual([]);
  });

  it('§4 a 204 (delete) prints an ok line', async () => {
    const h = harness(() => new Response(null, { status: 204 }));
    expect(await runCli(['endpoints', 'delete', 'we_1'], h.io)).toBe(0);
    expect(JSON.parse(h.out())).toEqual({ ok: true, status: 204 });
  });

  it('O12 an API error (409) goes to stderr in the API shape with exit 1', async () => {
    const apiError = { error: { code: 'conflict', message: 'delivery whd_1 was already delivered', requestId: 'req_1' } };
    const h = harness(() => Response.json(apiError, { status: 409 }));
    expect(await runCli(['deliveries', 'retry', 'whd_1'], h.io)).toBe(1);
    expect(JSON.parse(h.err())).toEqual(apiError);
    expect(h.out()).toBe('');
  });

  it('§4 a non-JSON error response becomes http_<status>', async () => {
    const h = harness(() => new Response('Bad Gateway', { status: 502 }));
    expect(await runCli(['events', 'get', 'evt_1'], h.io)).toBe(1);
    expect(JSON.parse(h.err()).error).toEqual({ code: 'http_502', message: 'Bad Gateway' });
  });

  it('§4 an unreachable API is an error naming the address, never the token', async () => {
    const h = harness();
    h.io.fetch = (async () => {
      throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
    }) as typeof fetch;
    expect(await runCli(['endpoints', 'list'], h.io)).toBe(1);
    const { error } = JSON.parse(h.err());
    expect(error.code).toBe('unreachable');
    expect(error.message).toContain('http://127.0.0.1:3000');
    expect(error.message).toContain('ECONNREFUSED');
    expect(h.err()).not.toContain('cli-test-token');
  });

  it.each([
    [['nope'], 'unknown command group'],
    [['endpoints', 'explode'], 'unknown command'],
    [['endpoints', 'get'], 'expects WE_ID'],
    [['endpoints', 'get', 'we_1', 'we_2'], 'expects WE_ID'],
    [['endpoints', 'create', '--url', 'https://x'], '--merchant is required'],
    [['endpoints', 'update', 'we_1', '--rate-limit', '0'], '--rate-limit must be'],
    [['endpoints', 'update', 'we_1'], 'at least one of'],
    [['endpoints', 'disable', 'we_1'], '--reason is required'],
    [['endpoints', 'list', '--bogus', '1'], 'bogus'],
    [['reconciliations', 'resolve', 'r1', '--decision', 'maybe', '--operator', 'a', '--reason', 'b'], 'applied, rejected, acknowledged'],
    [['reconciliations', 'resolve', 'r1', '--decision', 'applied', '--operator', 'a', '--reason', 'checked\u0000'], '--reason must not contain U+0000'],
    [['reconciliations', 'resolve', 'r1', '--decision', 'applied', '--operator', '\uD800x', '--reason', 'b'], '--operator must not contain a lone'],
    [['reconciliations', 'resolve', 'r1', '--decision', 'applied', '--operator', 'a', '--reason', 'x'.repeat(1001)], 'at most 1000'],
    [['reconciliations', 'resolve', 'r1', '--decision', 'applied', '--operator', 'a', '--reason', 'b', '--amount', '5'], '--amount and --currency go together'],
    [['reconciliations', 'resolve', 'r1', '--decision', 'rejected', '--operator', 'a', '--reason', 'b', '--post', 'webhook'], 'only for an applied'],
    [['reconciliations', 'resolve', 'r1', '--decision', 'applied', '--operator', 'a', '--reason', 'b', '--amount', '0', '--currency', 'EUR'], '--amount must be positive'],
    [['ledger', 'adjust', '--provider', 'p', '--payment', 'x', '--amount', '0', '--currency', 'EUR', '--operator', 'a', '--reason', 'b'], '--amount must be non-zero'],
    [['reconciliations', 'resolve', 'r1', '--decision', 'applied'], '--reason is required'],
    [['audit', 'list', '--csv', '--limit', '5'], '--csv exports every matching row'],
    [['audit', 'list', '--order', 'newest'], '--order must be one of asc, desc'],
    [['exports', 'resolutions', '--since', '2026-01-01'], 'since'],
    [['deliveries', 'list', '--status', 'lost'], '--status must be one of PENDING, RETRYING, DELIVERED, FAILED'],
    [['reconciliations', 'list', '--state', 'open'], '--state must be one of'],
    [['endpoints', 'list', '--order', 'newest'], '--order must be one of asc, desc'],
    [['deliveries', 'list', '--since', '01/12/2026'], '--since must be a date (2026-12-01)'],
    [['deliveries', 'list', '--until', '2026-02-30'], '--until must be a date'],
    [['endpoints', 'recover', 'we_1', '--since', 'yesterday'], '--since must be a date'],
    [['exports', 'ledger', '--from', '2026-11-01T00:00'], '--from must be a date'],
  ])('§7 usage error for %j: %s, exit 1, nothing sent', async (argv, message) => {
    const h = harness();
    expect(await runCli(argv, h.io)).toBe(1);
    const { error } = JSON.parse(h.err());
    expect(error.code).toBe('usage');
    expect(error.message).toContain(message);
    expect(h.seen).toHaveLength(0);
  });

  it('C2 portal-link ACCT asks for a signed link and prints its URL, then its id (A15)', async () => {
    const h = harness(() => Response.json({ id: 'pl_01jd2m3k4n5p6q7r8s9t0v1w2x', url: 'http://127.0.0.1:3000/portal/enter?token=abc.def', merchant_account: 'acct_demo_shop', expires_at: '2026-12-01T10:15:00Z' }, { status: 201 }));
    expect(await runCli(['portal-link', 'acct_demo_shop', '--ttl', '30m'], h.io)).toBe(0);
    expect(h.seen[0]!.method).toBe('POST');
    expect(h.seen[0]!.url.pathname).toBe('/admin/v1/portal-links');
    expect(h.seen[0]!.body).toEqual({ merchant_account: 'acct_demo_shop', ttl: '30m' });
    expect(h.out()).toBe('http://127.0.0.1:3000/portal/enter?token=abc.def\nid: pl_01jd2m3k4n5p6q7r8s9t0v1w2x\n');
    expect(await runCli(['portal-link'], harness().io)).toBe(1);
  });

  it('A15 portal-links revoke PL_ID deletes the link', async () => {
    const h = harness(() => Response.json({ id: 'pl_01jd2m3k4n5p6q7r8s9t0v1w2x', object: 'portal_link' }));
    expect(await runCli(['portal-links', 'revoke', 'pl_01jd2m3k4n5p6q7r8s9t0v1w2x'], h.io)).toBe(0);
    expect(h.seen[0]!.method).toBe('DELETE');
    expect(h.seen[0]!.url.pathname).toBe('/admin/v1/portal-links/pl_01jd2m3k4n5p6q7r8s9t0v1w2x');
  });

  it('L6 ledger check exits 1 when the API reports violations, 0 when ok', async () => {
    const bad = harness(() => Response.json({ ok: false, violations: [{ kind: 'unbalanced', message: 'transaction ltx_1 sums to 5 EUR', ids: ['ltx_1'] }] }));
    expect(await runCli(['ledger', 'check'], bad.io)).toBe(1);
    expect(bad.out()).toContain('ltx_1 sums to 5 EUR');
    expect(await runCli(['ledger', 'check'], harness(() => Response.json({ ok: true, violations: [] })).io)).toBe(0);
  });

  it('§4 a credential is required: APIPAY_API_KEY or the bootstrap ADMIN_TOKEN', async () => {
    const h = harness();
    delete h.io.env.ADMIN_TOKEN;
    expect(await runCli(['endpoints', 'list'], h.io)).toBe(1);
    expect(JSON.parse(h.err()).error.message).toBe('APIPAY_API_KEY (or api_key in ~/.config/apipay/config.json, or ADMIN_TOKEN) is not set');
  });

  it('A1 the CLI sends APIPAY_API_KEY when it is set, ahead of ADMIN_TOKEN', async () => {
    const h = harness(undefined, { APIPAY_API_KEY: 'apk_personal' });
    expect(await runCli(['keys', 'list'], h.io)).toBe(0);
    expect(h.seen[0]!.headers.authorization).toBe('Bearer apk_personal');
  });

  it('§4 help lists every command group and command', async () => {
    const h = harness();
    expect(await runCli(['help'], h.io)).toBe(0);
    for (const list of ['endpoints list', 'deliveries list', 'reconciliations list']) {
      expect(h.out()).toMatch(new RegExp(`apipay ${list} .*--order asc\\|desc\\] \\[--since DATE\\] \\[--until DATE\\] \\[--limit N\\]`));
    }
    expect(h.out()).toContain('`show` is the same as `get`');
    for (const line of ['endpoints create', 'endpoints rotate-secret', 'endpoints recover', 'deliveries retry', 'events get', 'reconciliations resolve', 'exports resolutions', 'exports ledger', 'ledger adjust', 'ledger check', 'keys create', 'keys list', 'keys revoke', 'secrets reencrypt']) {
      expect(h.out()).toContain(`apipay ${line}`);
    }
    expect(h.out()).toBe(helpText());
    expect(h.seen).toHaveLength(0);
  });

  it("C11 `apipay <command> --help` prints that command's usage and options, never a request or an error", async () => {
    const h = harness();
    expect(await runCli(['deliveries', 'retry', '--help'], h.io)).toBe(0);
    expect(h.out()).toMatch(/^usage: apipay deliveries retry /);
    expect(h.out()).not.toContain('deliveries list');
    const list = harness();
    expect(await runCli(['deliveries', 'list', '-h'], list.io)).toBe(0);
    expect(list.out()).toContain('--payment-reference VALUE');
    const group = harness();
    expect(await runCli(['ledger', '--help'], group.io)).toBe(0);
    for (const name of ['ledger adjust', 'ledger check']) expect(group.out()).toContain(`usage: apipay ${name}`);
    const listen = harness();
    expect(await runCli(['listen', '--help'], listen.io)).toBe(0);
    expect(listen.out()).toMatch(/^usage: apipay listen/);
    const unknown = harness();
    expect(await runCli(['nonsense', '--help'], unknown.io)).toBe(0);
    expect(unknown.out()).toBe(helpText());
    for (const x of [h, list, group, listen, unknown]) {
      expect(x.seen).toHaveLength(0);
      expect(x.err()).toBe('');
    }
  });
});
