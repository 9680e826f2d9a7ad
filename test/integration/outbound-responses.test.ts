// R3: whatever a merchant answers — binary, NUL, invalid UTF-8, huge, endless, dripping, reset mid-body, 1xx, 3xx,
// 204, garbage — the attempt activity records exactly one attempt with its outcome and a storable excerpt, and
// POSTs at most once per attempt number, even when Temporal retries it. Real PostgreSQL, a real TCP merchant.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeliveryActivities } from '../../src/activities/delivery.js';
import { createDatabase, type Database } from '../../src/db/client.js';
import { deliveries, deliveryAttempts } from '../../src/db/schema/index.js';
import { TEST_DATABASE_URL, TEST_SECRETS_KEY } from '../helpers/env.js';
import { insertDelivery, insertEndpoint, uniqueMerchant, waitFor } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import { refuseAttemptWrites } from '../helpers/refuse-writes.js';
import { startRawMerchant, type RawAnswer } from '../helpers/raw-merchant.js';
import { testLogger } from '../helpers/temporal.js';

// Long enough that a loaded 2-core CI machine still reads a prompt answer inside it (1 s failed under load).
const TIMEOUT_MS = 2500;
const CAP = 64;
// R3: a short lease, so the retry of an attempt whose row could not be written records it interrupted within seconds.
const profile = testProfile({ outbound: { request_timeout: `${TIMEOUT_MS}ms`, response_excerpt_bytes: CAP, in_flight_lease: '3s' } });
const R = '\uFFFD';

const head = (status: string, headers: Record<string, string | number> = {}) =>
  `HTTP/1.1 ${status}\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;
const reply = (status: string, body: string | Buffer, headers: Record<string, string> = {}): RawAnswer => (socket) =>
  socket.end(Buffer.concat([Buffer.from(head(status, { 'content-length': Buffer.byteLength(body), connection: 'close', ...headers })), Buffer.from(body)]));
const partThenReset = (status: string, part: string, how: 'reset' | 'close'): RawAnswer => (socket) => {
  socket.write(head(status, { 'content-length': 1000 }) + part);
  setTimeout(() => (how === 'reset' ? socket.resetAndDestroy() : socket.end()), 50);
};

interface Case {
  path: string;
  answer: RawAnswer;
  succeeded: boolean;
  status: number | null;
  kind: string | null;
  excerpt: string | null | RegExp;
  message: null | RegExp;
  /** The merchant's socket was closed by us: we stopped reading a body that would not end. */
  stoppedReading?: boolean;
}

const cases: Case[] = [
  { path: '/binary', answer: reply('200 OK', Buffer.from(Array.from({ length: 256 }, (_, i) => i)), { 'content-type': 'application/octet-stream' }),
    succeeded: true, status: 200, kind: null, excerpt: `${R.repeat(9)}\t\n${R}${R}\r${R.repeat(18)} !"#$%&'()*+,-./0123456789:;<=>?`, message: null },
  { path: '/png', answer: reply('200 OK', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d])),
    succeeded: true, status: 200, kind: null, excerpt: `${R}PNG\r\n${R}\n${R}${R}${R}\r`, message: null },
  { path: '/nul', answer: reply('200 OK', 'ok\u0000accepted'), succeeded: true, status: 200, kind: null, excerpt: `ok${R}accepted`, message: null },
  { path: '/invalid-utf8', answer: reply('500 Internal Server Error', Buffer.from([0x66, 0x6f, 0x6f, 0xff, 0xfe, 0xc3, 0x28, 0x62, 0x61, 0x72])),
    succeeded: false, status: 500, kind: 'server_error', excerpt: `foo${R}${R}${R}(bar`, message: /^HTTP 500$/ },
  { path: '/escape', answer: reply('400 Bad Request', '\u001b[2J\u001b]0;pwned\u0007 bad'), succeeded: false, status: 400, kind: 'client_error', excerpt: `${R}[2J${R}]0;pwned${R} bad`, message: /^HTTP 400$/ },
  // 21 × '€' is 63 bytes; the cap cuts the 22nd in half, and the half is dropped, not shown as U+FFFD.
  { path: '/cut-character', answer: reply('200 OK', '€'.repeat(50)), succeeded: true, status: 200, kind: null, excerpt: '€'.repeat(21), message: null },
  { path: '/huge', answer: (socket, { keepWriting }) => (socket.write(head('200 OK', { 'content-length': 2 ** 30 })), keepWriting('x'.repeat(65_536), 1)),
    succeeded: true, status: 200, kind: null, excerpt: 'x'.repeat(CAP), message: null, stoppedReading: true },
  { path: '/endless-chunked', answer: (socket, { keepWriting }) => (socket.write(head('200 OK', { 'transfer-encoding': 'chunked' })), keepWriting(`10\r\n${'y'.repeat(16)}\r\n`, 5)),
    succeeded: true, status: 200, kind: null, excerpt: 'y'.repeat(CAP), message: null, stoppedReading: true },
  // One byte every 100 ms: a per-chunk timeout would never fire; the total deadline ends it with what came.
  { path: '/drip', answer: (socket, { keepWriting }) => (socket.write(head('200 OK', { 'transfer-encoding': 'chunked' })), keepWriting('1\r\nz\r\n', 100)),
    succeeded: true, status: 200, kind: null, excerpt: /^z{2,30}$/, message: /^HTTP 200; response body still arriving at the deadline after \d+ bytes$/, stoppedReading: true },
  { path: '/drip-headers', answer: (socket, { keepWriting }) => (socket.write('HTTP/1.1 200 OK\r\n'), keepWriting('x-a: b\r\n', 100)),
    succeeded: false, status: null, kind: 'timeout', excerpt: null, message: new RegExp(`^no response within ${TIMEOUT_MS} ms$`) },
  { path: '/reset-mid-body', answer: partThenReset('200 OK', 'partial', 'reset'),
    succeeded: true, status: 200, kind: null, excerpt: 'partial', message: /^HTTP 200; response body cut short after 7 bytes \(ECONNRESET\)$/ },
  { path: '/close-mid-body', answer: partThenReset('200 OK', 'abc', 'close'),
    succeeded: true, status: 200, kind: null, excerpt: 'abc', message: /^HTTP 200; response body cut short after 3 bytes \(UND_ERR_SOCKET\)$/ },
  { path: '/reset-mid-body-503', answer: partThenReset('503 Service Unavailable', 'busy', 'reset'),
    succeeded: false, status: 503, kind: 'server_error', excerpt: 'busy', message: /^HTTP 503; response body cut short after 4 bytes/ },
  { path: '/reset-before-answer', answer: (socket) => socket.resetAndDestroy(), succeeded: false, status: null, kind: 'connection', excerpt: null, message: /ECONNRESET/ },
  // The body is kept as sent: no content decoding (the POST asks for none, P10), so a body declared gzip that is not
  // is stored as it came.
  { path: '/bad-gzip', answer: reply('200 OK', 'hello', { 'content-encoding': 'gzip' }),
    succeeded: true, status: 200, kind: null, excerpt: 'hello', message: null },
  // 1xx: 103 Early Hints is skipped and the final answer counts; any other 1xx our client cannot follow.
  { path: '/early-hints', answer: (socket) => socket.end(`${head('103 Early Hints', { link: '</a.css>; rel=preload' })}${head('200 OK', { 'content-length': 2 })}ok`),
    succeeded: true, status: 200, kind: null, excerpt: 'ok', message: null },
  { path: '/continue', answer: (socket) => socket.end(`${head('100 Continue')}${head('200 OK', { 'content-length': 2 })}ok`),
    succeeded: false, status: null, kind: 'invalid_response', excerpt: null, message: /bad response/ },
  { path: '/switching', answer: (socket) => socket.end(`${head('101 Switching Protocols', { upgrade: 'websocket', connection: 'Upgrade' })}\u0000\u0001`),
    succeeded: false, status: null, kind: 'invalid_response', excerpt: null, message: /bad upgrade/ },
  { path: '/redirect', answer: reply('301 Moved Permanently', 'moved', { location: '/landing' }), succeeded: false, status: 301, kind: 'redirect', excerpt: 'moved', message: /^HTTP 301$/ },
  // fetch (undici) re-sends a request answered 421 on a new connection, per the Fetch standard: found by the fuzz
  // (seed 8011, run 1074). The merchant must still get exactly one POST for the attempt.
  { path: '/misdirected', answer: reply('421 Misdirected Request', 'wrong host'), succeeded: false, status: 421, kind: 'client_error', excerpt: 'wrong host', message: /^HTTP 421$/ },
  { path: '/no-content', answer: (socket) => socket.end(head('204 No Content')), succeeded: true, status: 204, kind: null, excerpt: '', message: null },
  { path: '/empty', answer: reply('200 OK', ''), succeeded: true, status: 200, kind: null, excerpt: '', message: null },
  { path: '/garbage', answer: (socket) => socket.end('SSH-2.0-OpenSSH_9.6\r\n\u0000\u00ff'), succeeded: false, status: null, kind: 'invalid_response', excerpt: null, message: /^HPE_/ },
  { path: '/nul-in-header', answer: (socket) => socket.end(`HTTP/1.1 200 OK\r\nx-a: a\u0000b\r\ncontent-length: 2\r\n\r\nok`),
    succeeded: false, status: null, kind: 'invalid_response', excerpt: null, message: /^HPE_/ },
  { path: '/huge-headers', answer: reply('200 OK', 'ok', { 'x-big': 'h'.repeat(100_000) }), succeeded: false, status: null, kind: 'invalid_response', excerpt: null, message: /HEADERS_OVERFLOW/ },
  { path: '/status-999', answer: reply('999 Whatever', 'odd'), succeeded: false, status: 999, kind: 'invalid_response', excerpt: 'odd', message: /^HTTP 999$/ },
];

const secretish = 'merchant-body-0123456789';
const merchantAnswers: Record<string, RawAnswer> = {
  ...Object.fromEntries(cases.map((c) => [c.path, c.answer])),
  '/landing': reply('200 OK', 'landed'),
  '/refused-details': reply('200 OK', secretish),
  '/refused-all': reply('200 OK', secretish),
};
let database: Database;
let merchant: Awaited<ReturnType<typeof startRawMerchant>>;
const activities = () => createDeliveryActivities({ db: database.db, profile, logger: testLogger, secretsKey: TEST_SECRETS_KEY });
const attemptRows = (deliveryId: string) => database.db.select().from(deliveryAttempts).where(eq(deliveryAttempts.deliveryId, deliveryId));

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 4 });
  merchant = await startRawMerchant(merchantAnswers);
});
afterAll(async () => {
  await merchant?.close();
  await database?.close();
});

describe('R3 any merchant answer is recorded once', () => {
  it.each(cases.map((c) => [c.path, c] as const))('R3 %s: one POST, one attempt with its outcome and a storable excerpt', async (path, c) => {
    const merchantAccount = uniqueMerchant('r3');
    const endpoint = await insertEndpoint(database.db, { merchantAccount, url: `${merchant.url}${path}` });
    const { deliveryId } = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount });
    const input = { deliveryId, attemptNumber: 1, scheduledAt: Date.now(), retryInMs: 60_000 };

    const started = Date.now();
    const result = await activities().attemptDelivery(input);
    const tookMs = Date.now() - started;
    expect(result).toMatchObject({ outcome: c.succeeded ? 'delivered' : 'failed', responseStatus: c.status, errorKind: c.kind });
    // C5: the line the Temporal UI shows in the activity's result.
    expect(result.http).toMatch(c.status === null ? new RegExp(`^no HTTP answer: ${c.kind} after \\d+ ms$`) : new RegExp(`^HTTP ${c.status}\\b.* in \\d+ ms$`));
    expect(tookMs).toBeLessThan(TIMEOUT_MS + 2000); // the total deadline holds, whatever the body does

    const rows = await attemptRows(deliveryId);
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(row).toMatchObject({ attemptNumber: 1, succeeded: c.succeeded, responseStatus: c.status, errorKind: c.kind });
    if (c.excerpt instanceof RegExp) expect(row.responseExcerpt).toMatch(c.excerpt);
    else expect(row.responseExcerpt).toBe(c.excerpt);
    if (c.message === null) expect(row.errorMessage).toBeNull();
    else expect(row.errorMessage).toMatch(c.message);
    expect(Buffer.byteLength(row.responseExcerpt ?? '')).toBeLessThanOrEqual(3 * CAP);
    const [delivery] = await database.db.select().from(deliveries).where(eq(deliveries.id, deliveryId));
    expect(delivery!.status).toBe(c.succeeded ? 'DELIVERED' : 'RETRYING');

    if (c.stoppedReading) {
      // We closed the connection instead of reading on: the merchant's socket is gone soon after the attempt.
      const post = merchant.postsTo(path).at(-1)!;
      await waitFor(async () => post.closedAt !== undefined, 5_000, `${path} socket closed`);
      expect(post.closedAt! - started).toBeLessThan(TIMEOUT_MS + 2000);
    }

    // Temporal retries the activity (its completion was lost): the recorded outcome stands, nothing is re-sent.
    const again = await activities().attemptDelivery(input);
    expect(again).toEqual(result);
    expect(await attemptRows(deliveryId)).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 50)); // a stray second POST would have arrived by now
    expect(merchant.postsTo(path)).toHaveLength(1);
    expect(merchant.postsTo('/landing')).toHaveLength(0); // O7: no redirect was followed
  });
});

describe('R3 an attempt PostgreSQL will not record', () => {
  async function setup(label: string) {
    const merchantAccount = uniqueMerchant(label);
    const endpoint = await insertEndpoint(database.db, { merchantAccount, url: `${merchant.url}/refused-${label}` });
    const { deliveryId } = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount });
    return { deliveryId, path: `/refused-${label}`, input: { deliveryId, attemptNumber: 1, scheduledAt: Date.now(), retryInMs: 60_000 } };
  }

  it('R3 refused for its details, the attempt is recorded without them: delivered, one POST', async () => {
    const { deliveryId, path, input } = await setup('details');
    const refusal = await refuseAttemptWrites(database.sql, deliveryId, 'details');
    try {
      const result = await activities().attemptDelivery(input);
      expect(result).toMatchObject({ outcome: 'delivered', responseStatus: 200, errorKind: null });
      expect(await refusal.refusals()).toBe(1);
      const rows = await attemptRows(deliveryId);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ succeeded: true, responseStatus: 200, responseExcerpt: null });
      expect(rows[0]!.errorMessage).toBe('HTTP 200; the response details could not be stored (SQLSTATE 22021)');
      expect(merchant.postsTo(path)).toHaveLength(1);
    } finally {
      await refusal.lift();
    }
  });

  it('R3 not writable at all: the activity fails without the body in its error, and its retry records interrupted without a second POST', async () => {
    const { deliveryId, path, input } = await setup('all');
    const refusal = await refuseAttemptWrites(database.sql, deliveryId, 'all');
    try {
      const error = await activities().attemptDelivery(input).then(() => null, (e: unknown) => e as Error);
      expect(error?.name).toBe('AttemptNotRecordedError');
      expect(error?.message).toMatch(/^attempt 1 of whd_\w+ could not be recorded \(SQLSTATE 22021\)/);
      expect(error?.message).not.toContain(secretish);
      expect(await refusal.refusals()).toBe(2); // with its details, then without
      expect((await attemptRows(deliveryId))[0]!.errorKind).toBe('in_flight');
      await refusal.lift();

      const retried = await activities().attemptDelivery(input);
      expect(retried).toMatchObject({ outcome: 'failed', errorKind: 'interrupted' });
      const rows = await attemptRows(deliveryId);
      expect(rows.map((r) => [r.attemptNumber, r.errorKind])).toEqual([[1, 'interrupted']]);
      await new Promise((r) => setTimeout(r, 50));
      expect(merchant.postsTo(path)).toHaveLength(1);
    } finally {
      await refusal.lift();
    }
  });
});
