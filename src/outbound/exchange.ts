// O7, R3: one POST to a merchant and what came back — status, latency and a bounded, storable excerpt — within
// one total deadline. Whatever the merchant answers (binary, NUL bytes, invalid UTF-8, huge, endless, dripping,
// reset mid-body, 1xx, 3xx, garbage), the result is a value to record, never an exception.
import { request as undiciRequest, type Dispatcher } from 'undici';
import { readBody } from './body-reader.js';
import { exchangeDeadline } from './deadline.js';
import { excerptText, storableText } from './excerpt.js';
import { honoursRetryAfter, parseRetryAfter } from './retry-policy.js';

export type ExchangeErrorKind =
  | 'timeout'
  | 'connection'
  | 'redirect'
  | 'client_error'
  | 'server_error'
  /** The answer was not usable HTTP: garbage, a 1xx our client cannot follow, bad headers, a status past 599. */
  | 'invalid_response';

export interface ExchangeOutcome {
  succeeded: boolean;
  responseStatus: number | null;
  errorKind: ExchangeErrorKind | null;
  /** Storable. On a 2xx: null, or a note that the body could not be read (the status line decided the outcome). */
  errorMessage: string | null;
  /** Storable text of the first `excerptBytes` of the body ('' for an empty one); null when no answer came. */
  excerpt: string | null;
  /** Until the status line and headers arrived (or the failure). */
  latencyMs: number;
  /** O18: a 429's or 503's Retry-After in ms from the answer; absent otherwise. */
  retryAfterMs?: number | null;
}

export interface ExchangeRequest {
  url: string;
  body: Buffer;
  headers: Record<string, string>;
  /** O15: where to connect (the vetted addresses); undefined = the default pool. */
  dispatcher?: Dispatcher;
}

export interface ExchangeOptions {
  /** Total: status line, headers and excerpt, not per chunk (a slow drip cannot stretch it). */
  timeoutMs: number;
  excerptBytes: number;
}

export function classifyStatus(status: number): ExchangeErrorKind | null {
  if (status >= 200 && status < 300) return null;
  if (status >= 300 && status < 400) return 'redirect'; // O7: the merchant's misconfiguration, never followed
  if (status >= 400 && status < 500) return 'client_error';
  if (status >= 500 && status < 600) return 'server_error';
  return 'invalid_response';
}

// undici's codes for an answer that arrived but was not HTTP it could use.
const INVALID_RESPONSE_CODES = new Set(['UND_ERR_HEADERS_OVERFLOW', 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH', 'UND_ERR_INFO']);

/** A failed fetch as (kind, storable message): timeout, a non-HTTP answer, or a connection error. */
export function classifyFetchError(error: unknown, timeoutMs: number, deadline: AbortSignal): { kind: ExchangeErrorKind; message: string } {
  const err = error as Error & { cause?: { name?: string; code?: string; message?: string } };
  if (deadline.aborted || err.name === 'TimeoutError' || err.name === 'AbortError') {
    return { kind: 'timeout', message: `no response within ${timeoutMs} ms` };
  }
  const cause = err.cause ?? {};
  const code = cause.code ?? '';
  const invalid =
    code.startsWith('HPE_') ||
    cause.name === 'HTTPParserError' ||
    INVALID_RESPONSE_CODES.has(code) ||
    (code === 'UND_ERR_SOCKET' && /^bad (response|upgrade)/.test(cause.message ?? ''));
  const detail = [code, cause.message].filter(Boolean).join(': ') || err.message;
  return { kind: invalid ? 'invalid_response' : 'connection', message: storableText(detail) };
}

export async function exchange(request: ExchangeRequest, options: ExchangeOptions): Promise<ExchangeOutcome> {
  const timer = exchangeDeadline(options.timeoutMs);
  try {
    return await exchangeWithin(request, options, timer.signal);
  } finally {
    timer.clear();
  }
}

async function exchangeWithin(request: ExchangeRequest, options: ExchangeOptions, deadline: AbortSignal): Promise<ExchangeOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let response: Dispatcher.ResponseData;
  try {
    // P10: undici's request, not fetch: no web streams, Request/Response objects or fetch's retry rules per POST
    // (a local merchant took 3–13× more POSTs/s this way, docs/benchmarks.md). R3: it never re-sends a body (fetch
    // retries a request answered 421 when its body can be re-read) and, without maxRedirections, never follows a
    // redirect (O7: a 3xx is recorded as a failure, its Location never followed).
    response = await undiciRequest(request.url, {
      method: 'POST',
      dispatcher: request.dispatcher,
      body: request.body,
      signal: deadline,
      headers: { ...request.headers, 'content-length': String(request.body.length) },
    });
  } catch (error) {
    // undici's own error carries the code that fetch puts in `cause`.
    const { kind, message } = classifyFetchError({ name: (error as Error).name, message: (error as Error).message, cause: error }, options.timeoutMs, deadline);
    return { succeeded: false, responseStatus: null, errorKind: kind, errorMessage: message, excerpt: null, latencyMs: elapsed() };
  }
  const latencyMs = elapsed();
  const code = response.statusCode;
  const errorKind = classifyStatus(code);
  const read = await readBody(response.body, options.excerptBytes, deadline);
  const note = read.cutShort === null ? null : `response body ${read.cutShort}`;
  const status = `HTTP ${code}`;
  const header = response.headers['retry-after'];
  const retryAfterMs = honoursRetryAfter(code) ? parseRetryAfter((Array.isArray(header) ? header[0] : header) ?? null, Date.now()) : null;
  return {
    ...(retryAfterMs === null ? {} : { retryAfterMs }),
    succeeded: errorKind === null,
    responseStatus: code,
    errorKind,
    // A 2xx counts as delivered however its body ends: the status line is the merchant's answer (docs/outbound.md).
    errorMessage: errorKind === null ? note && storableText(`${status}; ${note}`) : storableText(note ? `${status}; ${note}` : status),
    excerpt: excerptText(read.bytes, read.truncated),
    latencyMs,
  };
}
