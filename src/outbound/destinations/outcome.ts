// M11: what a publish to a broker came to, as an attempt row (src/outbound/attempt-record.ts): success once the broker
// confirmed it (RabbitMQ publisher confirm, Kafka acks=all); otherwise timeout, connection (refused, reset, closed,
// unresolvable), unsafe_url (O15) or broker_refused (login, a nack, an unroutable message, a missing topic or
// exchange). The message is storable and never carries a credential (any secret value is masked out of it).
import { unsent, type AttemptOutcome } from '../attempt-record.js';
import { UnsafeUrlError } from '../url-safety.js';

export class PublishTimeoutError extends Error {
  override name = 'PublishTimeoutError';
}

/** The broker answered and refused (as opposed to not answering). */
export class BrokerRefusedError extends Error {
  override name = 'BrokerRefusedError';
}

const CONNECTION_CODES =
  /ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|EPIPE|ETIMEDOUT|Connection closed|Socket closed|KafkaJSConnection/i;

function chain(error: unknown): Array<Error & { code?: unknown; type?: unknown }> {
  const out = [];
  for (let e = error as (Error & { cause?: unknown; originalError?: unknown }) | undefined, depth = 0; e && depth < 6; depth++) {
    out.push(e);
    e = (e.originalError ?? e.cause) as typeof e;
  }
  return out;
}

export function brokerFailure(error: unknown, latencyMs: number, secrets: string[]): AttemptOutcome {
  const errors = chain(error);
  const text = errors
    .map((e) => `${e.name ?? ''} ${String(e.code ?? '')} ${String(e.type ?? '')} ${e.message ?? ''}`)
    .join(' | ');
  let kind: AttemptOutcome['errorKind'];
  if (errors.some((e) => e instanceof UnsafeUrlError || e.code === 'EUNSAFEADDRESS')) kind = 'unsafe_url';
  else if (errors.some((e) => e instanceof PublishTimeoutError || /RequestTimeout/.test(e.name ?? ''))) kind = 'timeout';
  else if (
    errors.some((e) => e instanceof BrokerRefusedError) ||
    /ACCESS[-_]REFUSED|NOT[-_]FOUND|SASL|AUTHORIZATION|UNKNOWN_TOPIC|KafkaJSProtocolError|NOT_ALLOWED|PRECONDITION/i.test(text)
  )
    kind = 'broker_refused';
  else if (CONNECTION_CODES.test(text)) kind = 'connection';
  else kind = 'connection';
  const first = errors.find((e) => e.message)?.message ?? String(error);
  return { ...unsent(kind, mask(first, secrets).slice(0, 500)), latencyMs };
}

/** Every secret value replaced by ***, and only printable text kept. */
function mask(message: string, secrets: string[]): string {
  let out = message;
  for (const s of secrets) if (s.length > 0) out = out.split(s).join('***');
  return out.replace(/[^\x20-\x7e]/g, ' ');
}

export function published(latencyMs: number, note: string): AttemptOutcome {
  return { succeeded: true, responseStatus: null, errorKind: null, errorMessage: null, excerpt: note, latencyMs };
}
