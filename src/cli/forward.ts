// `apipay listen`'s local side (M7): re-sign one streamed event with the listener's own secret (the scheme of
// src/signing, so the merchant's verifier runs unchanged), POST it to the local URL, and describe the outcome in
// one line: time, type, event id, local status, latency.
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

/** `2026-12-01T18:30:00Z  payment.succeeded  evt_…  [200]  12 ms` (or `[error ECONNREFUSED]`). */
export function deliveryLine(at: Date, event: StreamedEvent, outcome: Forwarded): string {
  const time = at.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const status = outcome.status === null ? `error ${outcome.error}` : String(outcome.status);
  return `${time}  ${event.type}  ${event.id}  [${status}]  ${outcome.latencyMs} ms\n`;
}
