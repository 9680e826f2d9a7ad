// M7 `apipay listen` / `apipay trigger` without servers: the SSE reader, the stream cursor and type globs, the
// trigger command's request, and the listener against a fake API and a fake local server (unit tests may fake an
// HTTP peer; the real stack is test/integration/listen.test.ts).
import { describe, expect, it } from 'vitest';
import { deliveryLine } from '../../src/cli/forward.js';
import { runCli } from '../../src/cli/run.js';
import { readSse } from '../../src/cli/sse.js';
import { decodeCursor, encodeCursor, isSnapshot, typeMatcher } from '../../src/outbound/stream-cursor.js';
import { TRIGGER_TYPES, testEventEnvelope } from '../../src/outbound/test-events.js';
import { parseEnvelope } from '../../src/outbound/envelope.js';
import { verify } from '../../src/signing/index.js';
import { lazyProducer } from '../../src/kafka/lazy-producer.js';

async function* chunks(...parts: string[]) {
  for (const p of parts) yield new TextEncoder().encode(p);
}
const all = async <T>(gen: AsyncIterable<T>) => {
  const out: T[] = [];
  for await (const x of gen) out.push(x);
  return out;
};

describe('M7 SSE reader', () => {
  it('M7 reads events split anywhere across chunks, CRLF or LF, multi-line data, comments, id and retry; drops an unterminated tail', async () => {
    const text =
      ': hello\r\nevent: ready\r\nid: c1\r\nretry: 1000\r\ndata: {"a":1}\r\n\r\nevent: event\nid: c2\ndata: line1\ndata: line2\n\ndata: plain\n\nid: c3\n\nevent: event\ndata: cut';
    const split = [...text].reduce<string[]>(
      (acc, ch, i) => (i % 7 === 0 ? [...acc, ch] : [...acc.slice(0, -1), acc[acc.length - 1] + ch]),
      [],
    );
    for (const parts of [[text], split]) {
      expect(await all(readSse(chunks(...parts)))).toEqual([
        { event: 'ready', id: 'c1', retry: 1000, data: '{"a":1}' },
        { event: 'event', id: 'c2', data: 'line1\nline2' },
        { event: 'message', data: 'plain' },
        { event: 'message', id: 'c3', data: '' },
      ]);
    }
  });
});

describe('M7 stream cursor', () => {
  it('M7 round-trips both forms and refuses anything PostgreSQL would not read as a snapshot', () => {
    for (const c of [{ after: '10:20:12,15' }, { after: '5:5:', within: { snapshot: '7:9:8', xid: '8', eventId: 'evt_abc' } }]) {
      expect(decodeCursor(encodeCursor(c))).toEqual(c);
    }
    expect(['1:1:', '10:20:10,10,19'].every(isSnapshot)).toBe(true);
    for (const bad of ['', 'x', '5:3:', '0:0:', '10:20:9', '10:20:20', '10:20:15,12', '1:2:~', '1:1:~1:1:~1~bad']) {
      expect(() => decodeCursor(bad), bad).toThrow(/stream cursor|too long/);
    }
    expect(() => decodeCursor(`1:1:~${'1:1:'}~1~evt_${'a'.repeat(20_000)}`)).toThrow('too long');
  });

  it('M7 globs: * is any run of characters, dots included; no globs or * is every type', () => {
    const m = typeMatcher(['payment.*', '*.failed', 'refund.succeeded']);
    expect(['payment.succeeded', 'payment.intent.created', 'dispute.failed', 'refund.succeeded'].every(m)).toBe(true);
    expect(['refund.created', 'payments.succeeded', 'payment'].some(m)).toBe(false);
    expect(typeMatcher([])('anything')).toBe(true);
    expect(typeMatcher(['*'])('x.y')).toBe(true);
  });
});

describe('M7 trigger', () => {
  it('M7 each sample is a valid envelope, test mode, marked test_event; unknown types have none', () => {
    expect(TRIGGER_TYPES).toContain('payment.succeeded');
    for (const type of TRIGGER_TYPES) {
      const envelope = testEventEnvelope(type, 'acct_1', new Date('2026-12-01T00:00:00Z'))!;
      const parsed = parseEnvelope(Buffer.from(JSON.stringify(envelope)));
      expect(parsed.ok, type).toBe(true);
      const body = JSON.parse(parsed.ok ? parsed.event.body.toString() : '{}');
      expect(body).toMatchObject({
        type,
        account: 'acct_1',
        livemode: false,
        created: 1_796_083_200,
        data: { test_event: true },
      });
    }
    expect(testEventEnvelope('payment.nope', 'acct_1', new Date())).toBeUndefined();
  });

  it('M7 `apipay trigger TYPE` and `events trigger TYPE --merchant` post to /events/trigger', async () => {
    for (const [argv, body] of [
      [['trigger', 'payment.succeeded'], { type: 'payment.succeeded' }],
      [
        ['events', 'trigger', 'refund.succeeded', '--merchant', 'acct_9'],
        { type: 'refund.succeeded', merchant_account: 'acct_9' },
      ],
    ] as const) {
      const seen: { url: string; init: RequestInit }[] = [];
      const io = {
        env: { APIPAY_API_KEY: 'apk_x', APIPAY_API_URL: 'http://api.test' },
        fetch: (async (url: string, init: RequestInit) => (
          seen.push({ url, init }),
          Response.json({ id: 'evt_1' }, { status: 202 })
        )) as unknown as typeof fetch,
        stdout: { write: () => true },
        stderr: { write: () => true },
      };
      expect(await runCli([...argv], io)).toBe(0);
      expect(seen[0]!.url).toBe('http://api.test/admin/v1/events/trigger');
      expect(seen[0]!.init.method).toBe('POST');
      expect(JSON.parse(String(seen[0]!.init.body))).toEqual(body);
    }
  });
});

describe('M7 listen against a fake API and local server', () => {
  const sse = (...messages: string[]) =>
    new Response(
      new ReadableStream({ start: (c) => (messages.forEach((m) => c.enqueue(new TextEncoder().encode(m))), c.close()) }),
      { headers: { 'content-type': 'text/event-stream' } },
    );

  it('M7 usage errors name the flag', async () => {
    const harness = () => {
      let err = '';
      return {
        io: {
          env: { APIPAY_API_KEY: 'apk_x' },
          fetch: fetch,
          stdout: { write: () => true },
          stderr: { write: (t: string) => (err += t) },
        },
        err: () => err,
      };
    };
    for (const [args, text] of [
      [[], '--forward-to'],
      [['--forward-to', 'ftp://x'], 'http'],
      [['--forward-to', 'http://l/h', '--secret', 'nope'], '--secret'],
      [['--forward-to', 'http://l/h', '--bogus'], 'bogus'],
    ] as const) {
      const h = harness();
      expect(await runCli(['listen', ...args], h.io)).toBe(1);
      expect(JSON.parse(h.err()).error).toMatchObject({ code: 'usage', message: expect.stringContaining(text) });
    }
  });

  it('M7 forwards each event signed with its secret, prints a line each, resumes with Last-Event-ID after the stream ends, stops on abort', async () => {
    const secret = 'whsec_unit_listen_secret_0123456789';
    const stop = new AbortController();
    const streams: Record<string, string>[] = [];
    const posts: { body: string; signature: string }[] = [];
    const body = (id: string) => JSON.stringify({ id, object: 'event', type: 'payment.succeeded' });
    const fakeFetch = (async (url: string, init: RequestInit) => {
      const headers = (init.headers ?? {}) as Record<string, string>;
      if (String(url).startsWith('http://local.test')) {
        posts.push({ body: String(init.body), signature: headers['ApiPay-Signature']! });
        if (posts.length === 2) stop.abort(); // Ctrl-C after the second event
        return new Response('ok', { status: posts.length === 1 ? 200 : 500 });
      }
      streams.push(headers);
      expect(String(url)).toBe('http://api.test/admin/v1/events/stream?merchant_account=acct_1&events=payment.*');
      const event = (cursor: string, id: string) =>
        `event: event\nid: ${cursor}\ndata: ${JSON.stringify({ id, type: 'payment.succeeded', livemode: false, created: 1, body: body(id) })}\n\n`;
      return streams.length === 1
        ? sse(`event: ready\nid: 1:1:\ndata: {"merchant_account":"acct_1","livemode":false}\n\n`, event('c-1', 'evt_1'))
        : sse(
            `event: ready\nid: c-1\ndata: {"merchant_account":"acct_1","livemode":false}\n\n`,
            event('c-2', 'evt_2'),
            event('c-3', 'evt_3'),
          );
    }) as unknown as typeof fetch;
    let out = '';
    const io = {
      env: { APIPAY_API_KEY: 'apk_x', APIPAY_API_URL: 'http://api.test' },
      fetch: fakeFetch,
      stdout: { write: (t: string) => (out += t) },
      stderr: { write: () => true },
      signal: stop.signal,
    };

    const code = await runCli(
      ['listen', '--forward-to', 'http://local.test/hooks', '--merchant', 'acct_1', '--events', 'payment.*', '--secret', secret],
      io,
    );
    expect(code).toBe(0);
    expect(streams.map((h) => h['last-event-id'])).toEqual([undefined, 'c-1']);
    expect(posts.map((p) => p.body)).toEqual([body('evt_1'), body('evt_2')]);
    for (const p of posts) expect(() => verify(p.body, p.signature, secret)).not.toThrow();
    expect(out).toContain(`Your webhook signing secret is ${secret}`);
    expect(out.match(/Ready!/g)).toHaveLength(1);
    expect(out).toMatch(/payment\.succeeded {2}evt_1 {2}\[200\] {2}\d+ ms/);
    expect(out).not.toContain('evt_2'); // aborted while it was being forwarded: not reported as handled
    expect(out).not.toContain('evt_3');
    expect(out.trimEnd().endsWith('Stopped.')).toBe(true);
  });

  it('M7 a stream the server ends with an error is reopened after a wait, from the last id', async () => {
    const stop = new AbortController();
    const connects: { at: number; lastId: string | undefined }[] = [];
    let err = '';
    const fakeFetch = (async (url: string, init: RequestInit) => {
      if (String(url).startsWith('http://local.test')) {
        stop.abort();
        return new Response('ok');
      }
      connects.push({ at: Date.now(), lastId: ((init.headers ?? {}) as Record<string, string>)['last-event-id'] });
      const ready = `event: ready\nid: r\ndata: {"merchant_account":"acct_1","livemode":false}\n\n`;
      const event = `event: event\nid: c-2\ndata: ${JSON.stringify({ id: 'evt_2', type: 't', body: '{}' })}\n\n`;
      const error = `event: error\ndata: {"error":{"code":"unavailable","message":"the event stream failed"}}\n\n`;
      return connects.length === 1 ? sse(ready, 'event: ping\nid: c-1\ndata: {}\n\n', error) : sse(ready, event);
    }) as unknown as typeof fetch;
    const io = {
      env: { APIPAY_API_KEY: 'apk_x', APIPAY_API_URL: 'http://api.test' },
      fetch: fakeFetch,
      stdout: { write: () => true },
      stderr: { write: (t: string) => (err += t) },
      signal: stop.signal,
    };
    expect(await runCli(['listen', '--forward-to', 'http://local.test/hooks'], io)).toBe(0);
    expect(connects.map((c) => c.lastId)).toEqual([undefined, 'c-1']);
    expect(connects[1]!.at - connects[0]!.at).toBeGreaterThanOrEqual(400);
    expect(err).toContain('the server ended the event stream (the event stream failed); reconnecting');
  });

  it('M7 a local server that is down is a line too, not a crash', () => {
    const line = deliveryLine(
      new Date('2026-12-01T18:30:00.123Z'),
      { id: 'evt_1', type: 'payment.failed', body: '{}' },
      { status: null, error: 'ECONNREFUSED', latencyMs: 2 },
    );
    expect(line).toBe('2026-12-01T18:30:00Z  payment.failed  evt_1  [error ECONNREFUSED]  2 ms\n');
  });
});

describe('M7 the API process connects to Kafka lazily (R5)', () => {
  it('M7 no connection until the first send; a failed connect is not cached; close closes what was opened', async () => {
    let connects = 0;
    const sent: string[] = [];
    let closed = 0;
    const producer = lazyProducer({ brokers: ['unused:1'], clientId: 'unit' }, async () => {
      connects += 1;
      if (connects === 1) throw new Error('broker down');
      return { send: async (topic) => void sent.push(topic), close: async () => void (closed += 1) };
    });
    expect(connects).toBe(0);
    await expect(producer.send('t', [{ value: 'x' }])).rejects.toThrow('broker down');
    await producer.send('t1', [{ value: 'x' }]);
    await producer.send('t2', [{ value: 'y' }]);
    expect(connects).toBe(2);
    expect(sent).toEqual(['t1', 't2']);
    await producer.close();
    expect(closed).toBe(1);
  });
});
