// `apipay listen --forward-to URL` (M7), like `stripe listen`: opens the admin API's event stream for the key's
// merchant account (`GET /admin/v1/events/stream`), re-signs each event with a secret of its own printed at start,
// POSTs it to the local URL and prints one line per event. A dropped stream is reopened with Last-Event-ID, so no
// event is lost or repeated; Ctrl-C (io.signal) ends it with exit code 0.
import { parseArgs } from 'node:util';
import { deliveryLine, forward, newListenSecret, type StreamedEvent } from './forward.js';
import { adminUrl, fail, tokenOf, type CliIo } from './io.js';
import { readSse } from './sse.js';

export const LISTEN_HELP =
  '  apipay listen --forward-to URL [--events payment.*,refund.succeeded] [--merchant ACCT] [--live] [--secret whsec_…]   (Ctrl-C to stop)';

const OPTIONS = {
  'forward-to': { type: 'string' },
  events: { type: 'string' },
  merchant: { type: 'string' },
  live: { type: 'boolean' },
  secret: { type: 'string' },
} as const;
const GIVE_UP = new Set([400, 401, 403, 404]);
const MAX_BACKOFF_MS = 10_000;

interface Settings {
  forwardTo: string;
  secret: string;
  query: URLSearchParams;
}

function settingsOf(args: string[], io: CliIo): Settings | string {
  let values;
  try {
    ({ values } = parseArgs({ args, options: OPTIONS, allowPositionals: false, strict: true }));
  } catch (error) {
    return (error as Error).message;
  }
  const forwardTo = values['forward-to'];
  if (!forwardTo) return '--forward-to URL is required, e.g. --forward-to http://localhost:4000/webhooks';
  let url: URL;
  try {
    url = new URL(forwardTo);
  } catch {
    return '--forward-to must be an http:// or https:// URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return '--forward-to must be an http:// or https:// URL';
  const secret = values.secret || io.env.APIPAY_LISTEN_SECRET || newListenSecret();
  if (!/^whsec_[A-Za-z0-9+/=_-]{16,200}$/.test(secret)) return '--secret must be a whsec_… secret';
  const query = new URLSearchParams();
  if (values.merchant) query.set('merchant_account', values.merchant);
  if (values.events) query.set('events', values.events);
  if (values.live) query.set('livemode', 'true');
  return { forwardTo: url.toString(), secret, query };
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

export async function runListen(args: string[], io: CliIo): Promise<number> {
  const settings = settingsOf(args, io);
  if (typeof settings === 'string') return fail(io, 'usage', settings);
  const token = tokenOf(io);
  if (!token) return fail(io, 'usage', 'APIPAY_API_KEY (a merchant key, or a staff key with --merchant) is not set');
  const url = `${adminUrl(io, '/events/stream')}${settings.query.size ? `?${settings.query}` : ''}`;
  const { signal } = io;

  let lastId: string | undefined;
  let announced = false;
  let backoff = 500;
  while (!signal?.aborted) {
    let response: Response;
    try {
      response = await io.fetch(url, {
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'text/event-stream',
          ...(lastId ? { 'last-event-id': lastId } : {}),
        },
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      if (signal?.aborted) break;
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      io.stderr.write(`cannot reach ${new URL(url).origin} (${cause ?? (error as Error).message}); retrying\n`);
      await sleep(backoff, signal);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      continue;
    }
    if (!response.ok) {
      const text = await response.text().catch(() => '');
      if (GIVE_UP.has(response.status)) {
        try {
          const body = JSON.parse(text) as { error?: { code?: string } };
          if (body.error?.code) return (io.stderr.write(`${JSON.stringify(body)}\n`), 1);
        } catch {
          // not our error shape
        }
        return fail(io, `http_${response.status}`, text.slice(0, 500) || response.statusText);
      }
      io.stderr.write(`the API answered ${response.status}; retrying\n`);
      await sleep(backoff, signal);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      continue;
    }
    try {
      for await (const message of readSse((response.body ?? new ReadableStream()) as unknown as AsyncIterable<Uint8Array>)) {
        if (message.event === 'ready') {
          backoff = 500;
          if (!announced) {
            const { merchant_account: account, livemode } = JSON.parse(message.data) as {
              merchant_account: string;
              livemode: boolean;
            };
            io.stdout.write(
              `Ready! Forwarding ${livemode ? 'live' : 'test'} events of ${account} to ${settings.forwardTo} (Ctrl-C to stop)\n`,
            );
            io.stdout.write(`Your webhook signing secret is ${settings.secret}\n`);
            announced = true;
          }
        } else if (message.event === 'event') {
          const event = JSON.parse(message.data) as StreamedEvent;
          const outcome = await forward(io.fetch, settings.forwardTo, event, settings.secret, signal ? { signal } : {});
          if (signal?.aborted) break; // this event was not handled: not printed, and its id not taken
          io.stdout.write(deliveryLine(new Date(), event, outcome));
        } else if (message.event === 'error') {
          io.stderr.write('the event stream failed on the server; resuming\n');
        }
        if (message.id !== undefined) lastId = message.id;
      }
    } catch (error) {
      if (signal?.aborted) break;
      io.stderr.write(`the event stream broke (${(error as Error).name}); resuming\n`);
      await sleep(backoff, signal);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  }
  io.stdout.write('Stopped.\n');
  return 0;
}
