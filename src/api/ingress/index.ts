// POST /webhooks/{provider} (I1–I6): raw bytes first, verify, extract, then one durable commit of registry row and
// receipt, and only then 200. Order of refusals: 404 unknown provider, 415 not JSON, 413 too large, 401 bad
// signature (nothing stored; it counts against the client address, and past that address's budget it is 429, A17;
// a signature that verifies is never refused for its address's failures, A23), 429 that provider's rate limit (A7,
// its own token bucket, spent only by verified requests, A17: unsigned junk cannot starve the real provider), 400
// unreadable payload (nothing stored). Duplicates answer 200 and change nothing. R18: the receipt keeps the request
// span's traceparent.
import type { Hono } from 'hono';
import { createFailureBuckets } from '../../access/failure-buckets.js';
import { createRateLimiter } from '../../lib/token-bucket.js';
import { currentTraceparent } from '../../tracing/context.js';
import { ingressMetrics as metrics } from '../../metrics/inbound-ingress.js';
import { ReceiptWriterOverloadedError } from '../../inbound/receipt-writer.js';
import { PayloadError, SignatureError } from '../../providers/index.js';
import type { ApiDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { clientAddress } from '../middleware/client-address.js';
import { isJsonContentType, nodeHeaders, nodeIncoming, readIncomingBody, readRawBody } from './raw-body.js';
import { createIngressServices, type IngressServices } from './services.js';

/** Kept with the receipt besides the adapter's signature headers, for support and for replaying verification. */
const RECEIPT_HEADERS = ['content-type', 'user-agent', 'x-request-id'];

export function registerIngress(app: Hono, deps: ApiDeps): IngressServices {
  const services = createIngressServices(deps);
  const limit = deps.profile.inbound.max_body_bytes;
  const now = deps.now ?? (() => new Date());
  const limiter = createRateLimiter(deps.profile.inbound.rate_limit);
  const unverified = createFailureBuckets({ db: deps.db, namespace: deps.throttleNamespace ?? '' }); // A23: shared by the replicas
  const retryAfterSeconds = deps.profile.inbound.overload_retry_after / 1000;

  app.post('/webhooks/:provider', async (c) => {
    const started = performance.now();
    const provider = c.req.param('provider');
    const adapter = services.providers.get(provider);
    if (!adapter) {
      metrics.rejected.inc({ provider: 'unknown', reason: 'unknown_provider' });
      throw new ApiError('not_found', `unknown provider ${JSON.stringify(provider.slice(0, 64))}`);
    }
    const incoming = nodeIncoming(c.env);
    const headers = incoming ? nodeHeaders(incoming) : c.req.header();
    if (!isJsonContentType(headers['content-type'])) {
      metrics.rejected.inc({ provider, reason: 'content_type' });
      throw new ApiError('unsupported_media_type', 'Content-Type must be application/json (UTF-8)');
    }
    let rawBody: Buffer | 'too_large';
    try {
      rawBody = incoming ? await readIncomingBody(incoming, limit) : await readRawBody(c.req.raw, limit);
    } catch {
      throw new ApiError('bad_request', 'the request body could not be read');
    }
    if (rawBody === 'too_large') {
      metrics.bodyTooLarge.inc({ provider });
      c.header('Connection', 'close');
      throw new ApiError('payload_too_large', `body exceeds ${limit} bytes`);
    }

    try {
      adapter.verify(rawBody, headers, now());
    } catch (error) {
      if (!(error instanceof SignatureError)) throw error;
      metrics.signatureRejections.inc({ provider, reason: error.reason });
      const junk = await unverified.take('unverified', clientAddress(c), deps.profile.inbound.unverified_per_address);
      if (!junk.allowed) {
        metrics.rejected.inc({ provider, reason: 'unverified_rate_limited' });
        throw new ApiError('rate_limited', 'too many requests with a bad signature from this address; retry later', undefined, junk.retryAfterMs / 1000);
      }
      throw new ApiError('invalid_signature', `invalid signature: ${error.message}`);
    }
    const taken = limiter.take(provider, deps.profile.inbound.providers[provider]?.rate_limit);
    if (!taken.allowed) {
      metrics.rejected.inc({ provider, reason: 'rate_limited' });
      throw new ApiError('rate_limited', `rate limit of provider ${provider} exceeded; retry later`, undefined, taken.retryAfterMs / 1000);
    }

    let event;
    try {
      event = adapter.extract(rawBody);
    } catch (error) {
      if (!(error instanceof PayloadError)) throw error;
      if (error.reason === 'unsupported_type') {
        // Refusing would make the provider retry an event we will never handle; acknowledge and count it.
        metrics.acknowledged.inc({ provider, result: 'ignored' });
        return c.json({ received: true, ignored: true, reason: error.message });
      }
      metrics.rejected.inc({ provider, reason: error.reason });
      throw new ApiError('invalid_payload', error.message);
    }

    const duplicate = () => c.json({ received: true, duplicate: true });
    if (services.cache.has(provider, event.providerEventId)) {
      metrics.duplicates.inc({ provider, source: 'cache' });
      metrics.acknowledged.inc({ provider, result: 'duplicate' });
      metrics.ackLatency.observe({ provider }, (performance.now() - started) / 1000);
      return duplicate();
    }

    const receiptHeaders: Record<string, string> = {};
    for (const name of [...RECEIPT_HEADERS, ...adapter.receiptHeaders]) {
      const value = headers[name];
      if (value !== undefined) receiptHeaders[name] = value;
    }
    let outcome;
    try {
      outcome = await services.writer.write({
        provider,
        providerEventId: event.providerEventId,
        rawBody,
        headers: receiptHeaders,
        receivedAt: now(),
        traceparent: currentTraceparent(), // R18: the sweep's start of this receipt joins the request's trace
      });
    } catch (error) {
      // R5: nothing was acknowledged; the provider retries after Retry-After (a late commit answers as a duplicate).
      if (error instanceof ReceiptWriterOverloadedError) {
        metrics.overloaded.inc({ provider, reason: error.reason });
        throw new ApiError('unavailable', 'the ingress is overloaded; retry later', undefined, retryAfterSeconds);
      }
      metrics.overloaded.inc({ provider, reason: 'commit_failed' });
      deps.logger.error({ err: error, provider }, 'receipt commit failed');
      throw new ApiError('unavailable', 'the receipt could not be stored; retry later', undefined, retryAfterSeconds);
    }
    services.cache.add(provider, event.providerEventId);
    metrics.ackLatency.observe({ provider }, (performance.now() - started) / 1000);
    if (outcome.duplicate) {
      metrics.duplicates.inc({ provider, source: 'registry' });
      metrics.acknowledged.inc({ provider, result: 'duplicate' });
      return duplicate();
    }
    metrics.acknowledged.inc({ provider, result: 'new' });
    services.starter?.enqueue(outcome.receiptId, {
      provider,
      receiptId: outcome.receiptId,
      event,
      acknowledgedAt: now().toISOString(),
    });
    return c.json({ received: true, duplicate: false });
  });

  return services;
}
