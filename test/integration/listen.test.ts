// M7 `apipay listen` and `apipay trigger` on the real PostgreSQL, Kafka and Temporal dev server: the API served on a
// port in-test, a dispatcher consuming its own topic, and the real CLI process. A triggered event goes API → Kafka →
// dispatcher → events table → stream → CLI → a local receiver, re-signed with the secret the CLI printed; another
// merchant's events never reach the stream; a reconnect with Last-Event-ID resumes after the last event seen.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { and, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSse, type SseMessage } from '../../src/cli/sse.js';
import type { Database } from '../../src/db/client.js';
import { auditEvents, events } from '../../src/db/schema/index.js';
import { createOutboundBatchHandler } from '../../src/dispatcher/outbound-handler.js';
import { runDispatcher } from '../../src/dispatcher/run.js';
import { createBatchConsumer, createKafkaAdmin } from '../../src/kafka/kafkajs.js';
import { lazyProducer } from '../../src/kafka/lazy-producer.js';
import type { BatchConsumer, Producer } from '../../src/kafka/types.js';
import { verify } from '../../src/signing/index.js';
import { callAs, createKey, type Caller } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { KAFKA_BROKERS, TEST_ADMIN_TOKEN } from '../helpers/env.js';
import { startReceiver, uniqueMerchant } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import { testLogger, uniqueTaskQueues } from '../helpers/temporal.js';
import { expectNoMore, waitFor } from '../helpers/wait.js';
import { useWorld, type World } from '../helpers/world.js';

let database: Database;
let temporal: World['temporal'];
let producer: Producer;
let consumer: BatchConsumer;
let server: ServerType;
let apiUrl: string;
let app: ReturnType<typeof testApp>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const kafkaAdmin = createKafkaAdmin({ brokers: KAFKA_BROKERS, clientId: 'listen-test' });
const topic = `apipay.test.listen.${randomUUID().slice(0, 8)}`;
const mine = uniqueMerchant('listen-a');
const theirs = uniqueMerchant('listen-b');
const callers = {} as Record<'merchant' | 'other' | 'operator' | 'viewer', Caller>;
const children: ChildProcess[] = [];

const world = useWorld({ label: 'listen' });
beforeAll(async () => {
  database = world.database;
  temporal = world.temporal;
  await kafkaAdmin.createTopic(topic, 1);
  producer = lazyProducer({ brokers: KAFKA_BROKERS, clientId: 'listen-test-api' }); // as src/workers/api.ts builds it
  const taskQueues = uniqueTaskQueues('listen');
  const profile = testProfile({ outbound: { kafka: { topic, group: `listen-${randomUUID().slice(0, 8)}` } } });
  app = testApp({ db: database.db, temporal: temporal.client, taskQueues, profile, producer });
  server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
  await new Promise((resolve) => server.once('listening', resolve));
  apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  consumer = createBatchConsumer({
    brokers: KAFKA_BROKERS,
    clientId: 'listen-test-dispatcher',
    topic,
    groupId: profile.outbound.kafka.group,
  });
  const delivery = { taskQueue: taskQueues.delivery, profile, logger: testLogger };
  await runDispatcher(consumer, createOutboundBatchHandler({ db: world.db, temporal: world.temporal.client, ...delivery }));
  receiver = await startReceiver();
  callers.merchant = await createKey(app, 'merchant', mine, 'listen-mine');
  callers.other = await createKey(app, 'merchant', theirs, 'listen-theirs');
  callers.operator = await createKey(app, 'operator');
  callers.viewer = await createKey(app, 'viewer');
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await consumer?.stop();
  await producer?.close();
  await kafkaAdmin.close();
  await receiver?.close();
  (server as unknown as { closeAllConnections?: () => void })?.closeAllConnections?.();
  await new Promise((resolve) => server?.close(resolve));
});

const trigger = async (caller: Caller, type: string, merchant?: string) => {
  const res = await callAs(app, caller.token, 'POST', '/events/trigger', {
    type,
    ...(merchant ? { merchant_account: merchant } : {}),
  });
  expect(res.status, res.text).toBe(202);
  return res.json.id as string;
};
const stored = (ids: string[]) =>
  waitFor(
    async () => (await database.db.select().from(events).where(inArray(events.eventPublicId, ids))).length === ids.length,
    30_000,
    `events ${ids.join(',')} stored`,
  );

/** The real CLI (src/cli/index.ts) as a child process; its stdout collected. */
function startCli(args: string[], token: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], {
    env: { ...process.env, APIPAY_API_URL: apiUrl, APIPAY_API_KEY: token, APIPAY_LISTEN_SECRET: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const out = { stdout: '', stderr: '' };
  child.stdout!.on('data', (c: Buffer) => (out.stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out.stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, out, exited };
}

/** An open stream read message by message (each `next()` waits for the next one). */
async function openStream(token: string, query = '', lastEventId?: string) {
  const controller = new AbortController();
  const res = await fetch(`${apiUrl}/admin/v1/events/stream${query}`, {
    headers: { authorization: `Bearer ${token}`, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
    signal: controller.signal,
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  const messages = readSse(res.body as unknown as AsyncIterable<Uint8Array>);
  const next = async (): Promise<SseMessage> => (await messages.next()).value as SseMessage;
  /** The next `event` messages, skipping pings. */
  const take = async (n: number) => {
    const out: SseMessage[] = [];
    while (out.length < n) {
      const m = await next();
      if (m.event === 'event') out.push(m);
    }
    return out;
  };
  return { next, take, close: () => controller.abort() };
}

describe('M7 apipay listen and apipay trigger', () => {
  it('M7 listen → trigger: the local server gets a POST signed with the printed secret, one line is printed, other merchants and filtered types are not forwarded; Ctrl-C exits 0', async () => {
    const cli = startCli(['listen', '--forward-to', `${receiver.url}/hooks`, '--events', 'payment.*'], callers.merchant.token);
    const secret = (await waitFor(
      () => /signing secret is (whsec_\S+)/.exec(cli.out.stdout)?.[1],
      60_000,
      `the secret line (${cli.out.stderr})`,
    ))!;
    expect(cli.out.stdout).toContain(`events of ${mine}`);

    const skipped = await trigger(callers.merchant, 'refund.succeeded'); // not payment.*: not forwarded
    const foreign = await trigger(callers.other, 'payment.succeeded'); // another merchant
    const foreignByStaff = await trigger(callers.operator, 'payment.failed', theirs);
    const id = await trigger(callers.merchant, 'payment.succeeded');
    await stored([skipped, foreign, foreignByStaff, id]);

    const got = await waitFor(() => receiver.received.find((r) => r.path === '/hooks'), 30_000, 'the forwarded POST');
    const body = JSON.parse(got.body.toString('utf8'));
    expect(body).toMatchObject({ id, type: 'payment.succeeded', account: mine, livemode: false, data: { test_event: true } });
    expect(() => verify(got.body, got.headers['apipay-signature'] as string, secret)).not.toThrow();
    expect(() => verify(got.body, got.headers['apipay-signature'] as string, 'whsec_some_other_secret')).toThrow();
    const line = await waitFor(() => cli.out.stdout.split('\n').find((l) => l.includes(id)), 10_000, 'the delivery line');
    expect(line).toMatch(
      new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ  payment\\.succeeded  ${id}  \\[200\\]  \\d+ ms$`),
    );

    await expectNoMore(() => receiver.received.filter((r) => r.path === '/hooks').length, 1, 1_500, 'forwarded POSTs');
    for (const other of [skipped, foreign, foreignByStaff]) expect(cli.out.stdout).not.toContain(other);

    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(0);
    expect(cli.out.stdout).toContain('Stopped.');
  });

  it('M7 a reconnect with Last-Event-ID resumes after the last event seen: the ones written meanwhile arrive in order, none again', async () => {
    const first = await openStream(callers.merchant.token);
    expect((await first.next()).event).toBe('ready');
    const e1 = await trigger(callers.merchant, 'payment.succeeded');
    const [m1] = await first.take(1);
    expect(JSON.parse(m1!.data).id).toBe(e1);
    first.close();

    const e2 = await trigger(callers.merchant, 'payment.pending');
    const e3 = await trigger(callers.merchant, 'payment.failed');
    await stored([e2, e3]);
    const resumed = await openStream(callers.merchant.token, '', m1!.id);
    const ready = await resumed.next();
    expect(JSON.parse(ready.data)).toMatchObject({ merchant_account: mine, resumed: true });
    const after = await resumed.take(2);
    expect(after.map((m) => JSON.parse(m.data).id)).toEqual([e2, e3]);
    const sent = JSON.parse(after[0]!.data);
    expect(sent).toEqual({
      id: e2,
      type: 'payment.pending',
      livemode: false,
      created: expect.any(Number),
      body: expect.any(String),
    });
    expect(JSON.parse(sent.body)).toMatchObject({ id: e2, account: mine, data: { test_event: true } });
    resumed.close();

    // A new stream without Last-Event-ID starts now: the earlier events are not replayed.
    const fresh = await openStream(callers.merchant.token);
    expect((await fresh.next()).event).toBe('ready');
    const e4 = await trigger(callers.merchant, 'payment.succeeded');
    expect(JSON.parse((await fresh.take(1))[0]!.data).id).toBe(e4);
    fresh.close();
  });

  it('M7 A1 an open stream of a key that is revoked ends with an unauthorized error; reopening it answers 401', async () => {
    const key = await createKey(app, 'merchant', mine, 'listen-revoked');
    const stream = await openStream(key.token);
    expect((await stream.next()).event).toBe('ready');
    expect((await callAs(app, TEST_ADMIN_TOKEN, 'POST', `/api-keys/${key.id}/revoke`)).status).toBe(200);
    let message: SseMessage;
    do message = await stream.next();
    while (message.event === 'ping');
    expect(message.event).toBe('error');
    expect(JSON.parse(message.data).error.code).toBe('unauthorized');
    expect(await stream.next()).toBeUndefined(); // the server closed it
    const again = await fetch(`${apiUrl}/admin/v1/events/stream`, { headers: { authorization: `Bearer ${key.token}` } });
    expect(again.status).toBe(401);
  });

  it('M7 the stream refuses what it must: a viewer (no bodies), another account for a merchant key, a staff key without an account, a bad cursor; trigger knows its types', async () => {
    const res = (token: string, query: string, headers: Record<string, string> = {}) =>
      fetch(`${apiUrl}/admin/v1/events/stream${query}`, { headers: { authorization: `Bearer ${token}`, ...headers } });
    expect((await res(callers.viewer.token, `?merchant_account=${mine}`)).status).toBe(403);
    expect((await res(callers.merchant.token, `?merchant_account=${theirs}`)).status).toBe(404);
    const staff = await res(callers.operator.token, '');
    expect(staff.status).toBe(400);
    expect(((await staff.json()) as { error: { message: string } }).error.message).toContain('merchant_account');
    const bad = await res(callers.merchant.token, '', { 'last-event-id': '5:3:' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain('last-event-id');
    expect((await res(callers.merchant.token, '?events=Payment%20*')).status).toBe(400);

    const refuser = await createKey(app, 'merchant', mine, 'listen-refused');
    const unknown = await callAs(app, refuser.token, 'POST', '/events/trigger', { type: 'payment.nope' });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error.message).toContain('payment.succeeded');
    expect(
      (
        await callAs(app, refuser.token, 'POST', '/events/trigger', {
          type: 'payment.succeeded',
          merchant_account: theirs,
        })
      ).status,
    ).toBe(404);

    // A3: a published test event is audited with its actor; refused ones are not.
    const id = await trigger(callers.operator, 'dispute.created', mine);
    const rows = await database.db.select().from(auditEvents).where(eq(auditEvents.targetId, id));
    expect(rows).toMatchObject([
      {
        action: 'event.trigger',
        actorKeyId: callers.operator.id,
        targetType: 'event',
        after: { type: 'dispute.created', merchant_account: mine },
      },
    ]);
    expect(
      await database.db
        .select()
        .from(auditEvents)
        .where(and(eq(auditEvents.action, 'event.trigger'), eq(auditEvents.actorKeyId, refuser.id))),
    ).toHaveLength(0);
  });
});
