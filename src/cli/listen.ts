// `apipay listen --forward-to URL` (M7), like `stripe listen`: opens the admin API's event stream for the key's
// merchant account (`GET /admin/v1/events/stream`), re-signs each event with a secret of its own printed at start,
// POSTs it to the local URL and prints one line per event. A dropped stream is reopened with Last-Event-ID, so no
// event is lost or repeated; Ctrl-C (io.signal) ends it with exit code 0.
import { parseArgs } from 'node:util';
import { deliveryLine, forwardWithRetries, newListenSecret, pause, type StreamedEvent } from './forward.js';
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
const MIN_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 10_000;
/** Three of the server's 15 s heartbeats. */
const SILENCE_MS = 45_000;

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

export async function runListen(args: string[], io: CliIo): Promise<number> {
  const settings = settingsOf(args, io);
  if (typeof settings === 'string') return fail(io, 'usage', settings);
  const token = tokenOf(io);
  if (!token) return fail(io, 'usage', 'APIPAY_API_KEY (a merchant key, or a staff key with --merchant) is not set');
  const url = `${adminUrl(io, '/events/stream')}${settings.query.size ? `?${settings.query}` : ''}`;
  const { signal } = io;

  let lastId: string | undefined;
  let announced = false;
  let backoff = MIN_BACKOFF_MS;
  const retry = async (why: string) => {
    io.stderr.write(`${why}; reconnecting\n`);
    await pause(backoff, signal);
    backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
  };
  while (!signal?.aborted) {
    // Each connection has its own watchdog: a stream silent for longer than three heartbeats is dropped and reopened.
    const connection = new AbortController();
    const both = signal ? AbortSignal.any([signal, connection.signal]) : connection.signal;
    let watchdog = setTimeout(() => connection.abort(), SILENCE_MS);
    const alive = () => (clearTimeout(watchdog), (watchdog = setTimeout(() => connection.abort(), SILENCE_MS)));
    try {
      let response: Response;
      try {
        const headers = {
          authorization: `Bearer ${token}`,
          accept: 'text/event-stream',
          ...(lastId ? { 'last-event-id': lastId } : {}),
        };
        response = await io.fetch(url, { headers, signal: both });
      } catch (error) {
        if (signal?.aborted) break;
        const cause = (error as { cause?: { code?: string } }).cause?.code;
        await retry(`cannot reach ${new URL(url).origin} (${cause ?? (error as Error).name})`);
        continue;
      }
      if (!response.ok) {
        const text = await response.text().catch(() => '');
        if (GIVE_UP.has(response.status)) return failWith(io, response, text);
        await retry(`the API answered ${response.status}`);
        continue;
      }
      let serverError: string | undefined;
      try {
        for await (const message of readSse((response.body ?? new ReadableStream()) as unknown as AsyncIterable<Uint8Array>)) {
          alive();
          if (message.event === 'event' || message.event === 'ping') backoff = MIN_BACKOFF_MS; // the stream works
          if (message.event === 'ready') {
            if (!announced) announce(io, settings, JSON.parse(message.data) as { merchant_account: string; livemode: boolean });
            announced = true;
          } else if (message.event === 'event') {
            const event = JSON.parse(message.data) as StreamedEvent;
            // C11: a failed local POST is retried with backoff, said on stderr; the stream's watchdog waits meanwhile.
            const outcome = await forwardWithRetries(io.fetch, settings.forwardTo, event, settings.secret, {
              ...(signal ? { signal } : {}),
              say: (line) => (alive(), io.stderr.write(line)),
            });
            if (signal?.aborted) break; // this event was not handled: not printed, and its id not taken
            io.stdout.write(deliveryLine(new Date(), event, outcome));
          } else if (message.event === 'error') {
            serverError = (JSON.parse(message.data) as { error?: { message?: string } }).error?.message ?? 'an error';
          }
          if (message.id !== undefined) lastId = message.id;
        }
        // A stream the server ended on purpose (max_seconds) is reopened at once; one it ended on an error after a wait.
        if (serverError !== undefined && !signal?.aborted) await retry(`the server ended the event stream (${serverError})`);
      } catch (error) {
        if (signal?.aborted) break;
        await retry(
          connection.signal.aborted
            ? `no message for ${SILENCE_MS / 1000} s`
            : `the event stream broke (${(error as Error).name})`,
        );
      }
    } finally {
      clearTimeout(watchdog);
    }
  }
  io.stdout.write('Stopped.\n');
  return 0;
}

function announce(io: CliIo, settings: Settings, ready: { merchant_account: string; livemode: boolean }) {
  const mode = ready.livemode ? 'live' : 'test';
  io.stdout.write(`Ready! Forwarding ${mode} events of ${ready.merchant_account} to ${settings.forwardTo} (Ctrl-C to stop)\n`);
  io.stdout.write(`Your webhook signing secret is ${settings.secret}\n`);
}

/** The API's own error line when it answered in our shape, else an http_<status> one; exit code 1. */
function failWith(io: CliIo, response: Response, text: string): number {
  try {
    const body = JSON.parse(text) as { error?: { code?: string } };
    if (body.error?.code) return (io.stderr.write(`${JSON.stringify(body)}\n`), 1);
  } catch {
    // not our error shape
  }
  return fail(io, `http_${response.status}`, text.slice(0, 500) || response.statusText);
}
