// Outbound test fixtures: endpoints with real encrypted secrets, a real local merchant receiver, envelopes, waits.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Db } from '../../src/db/client.js';
import { deliveries, events, webhookEndpoints } from '../../src/db/schema/index.js';
import { generateEndpointSecret, insertEndpointSecret } from '../../src/outbound/secrets.js';
import { newId } from '../../src/shared/ids.js';
import { TEST_SECRETS_KEY } from './env.js';

export const uniqueMerchant = (label: string) => `acct_${label}_${randomUUID().slice(0, 8)}`;
export const uniqueEventId = () => `evt_${randomUUID().replaceAll('-', '')}`;

export async function insertEndpoint(
  db: Db,
  options: { merchantAccount: string; url: string; eventTypes?: string[]; livemode?: boolean; status?: 'enabled' | 'disabled' },
): Promise<{ id: string; secret: string }> {
  const id = newId('we');
  const secret = generateEndpointSecret();
  await db.insert(webhookEndpoints).values({
    id,
    merchantAccount: options.merchantAccount,
    url: options.url,
    eventTypes: options.eventTypes ?? ['*'],
    livemode: options.livemode ?? false,
    status: options.status ?? 'enabled',
  });
  await insertEndpointSecret(db, id, secret, TEST_SECRETS_KEY);
  return { id, secret };
}

export function envelope(options: { id?: string; merchantAccount: string; type?: string; livemode?: boolean; amount?: number }) {
  return {
    id: options.id ?? uniqueEventId(),
    object: 'event',
    type: options.type ?? 'payment.succeeded',
    created: 1_764_547_200,
    livemode: options.livemode ?? false,
    data: { object: { id: `pay_${randomUUID().slice(0, 8)}`, object: 'payment', amount: options.amount ?? 1000, currency: 'eur' } },
    merchant_account: options.merchantAccount,
  };
}

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  at: number;
}

export type Reply = { status: number; body?: string; headers?: Record<string, string>; delayMs?: number };

/** A real HTTP server on 127.0.0.1 that records every request and answers with `reply(request, index)`. */
export async function startReceiver(reply: (request: Received, index: number) => Reply | Promise<Reply> = () => ({ status: 200 })) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const request: Received = { path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks), at: Date.now() };
      const index = received.push(request) - 1;
      const answer = await reply(request, index);
      if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
      if (res.destroyed) return;
      res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers }).end(answer.body ?? 'ok');
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export { waitFor } from './wait.js';

/**
 * An event row and one PENDING delivery to `endpointId`, as the dispatcher's fan-out would write them (O4); `body`
 * stores other bytes as the event's body, `delivery` sets the delivery row's other columns (a status it reached).
 */
export async function insertDelivery(
  db: Db,
  options: {
    endpointId: string;
    merchantAccount: string;
    type?: string;
    body?: Buffer;
    delivery?: Partial<typeof deliveries.$inferInsert>;
  },
) {
  const event = envelope({ merchantAccount: options.merchantAccount, type: options.type });
  const body = options.body ?? Buffer.from(JSON.stringify(event));
  await db.insert(events).values({
    eventPublicId: event.id,
    merchantAccount: options.merchantAccount,
    type: event.type,
    livemode: false,
    createdUnix: event.created,
    body,
  });
  const deliveryId = newId('whd');
  await db.insert(deliveries).values({
    id: deliveryId,
    eventPublicId: event.id,
    endpointId: options.endpointId,
    merchantAccount: options.merchantAccount,
    ...options.delivery,
  });
  return { deliveryId, eventId: event.id, body };
}
