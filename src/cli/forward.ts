// `apipay listen`'s local side (M7): re-sign one streamed event with the listener's own secret (the scheme of
// src/signing, so the merchant's verifier runs unchanged), POST it to the local URL, and describe the outcome in
// one line: time, type, event id, local status, latency. C11: a failed local POST (no answer, a timeout, 408, 429 or
// 5xx) is sent again with backoff, each retry said on stderr; a 4xx answer is the handler's verdict and is not.
import { randomBytes } from 'node:crypto';
import { SIGNATURE_HEADER, sign } from '../signing/index.js';

/** The same shape as an endpoint's secret (whsec_ + 32 random bytes, base64); the whole string is the HMAC key. */
export const newListenSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

export interface StreamedEvent {
  id: string;
  type: string;
  body: string;
}

export interface Forwarded {
  status: number | null;
  error?: string;
  latencyMs: number;
}

/** Like a real delivery: the exact body, a fresh signature, 10 s to answer; never throws. */
export async function forward(
  fetchFn: typeof fetch,
  url: string,
  event: StreamedEvent,
  secret: string,
  options: { now?: () => Date; signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<Forwarded> {
  const timestamp = Math.floor((options.now?.() ?? new Date()).getTime() / 1000);
  const started = performance.now();
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 10_000);
  try {
    const response = await fetchFn(url, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'apipay-listen',
        [SIGNATURE_HEADER]: sign({ payload: event.body, secrets: [secret], timestamp }),
      },
      body: event.body,
      signal: options.signal ? AbortSignal.any([options.signal, timeout]) : timeout,
    });
    await response.arrayBuffer().catch(() => undefined);
    return { status: response.status, latencyMs: Math.round(performance.now() - started) };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    const name = (error as Error).name === 'TimeoutError' ? 'timeout' : (cause ?? (error as Error).name);
    return { status: null, error: name, latencyMs: Math.round(performance.now() - started) };
  }
}

/** `2026-12-01T18:30:00Z  payment.succeeded  evt_…  [200]  12 ms` (or `[error ECONNREFUSED]`; `(attempt 3)` after retries). */
export function deliveryLine(at: Date, event: StreamedEvent, outcome: Forwarded & { attempts?: number }): string {
  const time = at.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const status = outcome.status === null ? `error ${outcome.error}` : String(outcome.status);
  const attempts = outcome.attempts !== undefined && outcome.attempts > 1 ? `  (attempt ${outcome.attempts})` : '';
  return `${time}  ${event.type}  ${event.id}  [${status}]  ${outcome.latencyMs} ms${attempts}\n`;
}

/** Worth sending again: nothing answered (refused, reset, timed out), or the answer says "later" (408, 429, 5xx). */
export const retryable = (outcome: Forwarded) =>
  outcome.status === null || outcome.status === 408 || outcome.status === 429 || outcome.status >= 500;

/** C11: the waits before each retry: `initialMs` doubling, at most `maxMs` each (0.5 s, 1 s, 2 s, 4 s by default). */
export function retryDelays(retries = 4, initialMs = 500, maxMs = 8000): number[] {
  return Array.from({ length: Math.max(0, retries) }, (_, i) => Math.min(maxMs, initialMs * 2 ** i));
}

/** Waits `ms`, or less when `signal` aborts (at once when it already has). */
export const pause = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(1))} s`;

/**
 * forward(), and on a retryable outcome again after each of `delays`, saying so on `say` (stderr): the same body,
 * signed afresh each time (a new timestamp), as a real delivery's retry. Stops at once when `signal` aborts.
 */
export async function forwardWithRetries(
  fetchFn: typeof fetch,
  url: string,
  event: StreamedEvent,
  secret: string,
  options: {
    signal?: AbortSignal;
    delays?: number[];
    say?: (line: string) => void;
    sleep?: typeof pause;
    timeoutMs?: number;
  } = {},
): Promise<Forwarded & { attempts: number }> {
  const delays = options.delays ?? retryDelays();
  const sleep = options.sleep ?? pause;
  const once = () =>
    forward(fetchFn, url, event, secret, {
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    });
  let outcome = await once();
  let attempts = 1;
  for (const delay of delays) {
    if (!retryable(outcome) || options.signal?.aborted) break;
    const why = outcome.status === null ? `error ${outcome.error}` : `HTTP ${outcome.status}`;
    options.say?.(`${event.id}: the local POST failed (${why}); retry ${attempts} of ${delays.length} in ${seconds(delay)}\n`);
    await sleep(delay, options.signal);
    if (options.signal?.aborted) break;
    outcome = await once();
    attempts += 1;
  }
  if (retryable(outcome) && attempts > 1 && !options.signal?.aborted)
    options.say?.(`${event.id}: gave up after ${attempts} attempts; on to the next event\n`);
  return { ...outcome, attempts };
}
