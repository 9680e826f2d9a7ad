// M11: publishing one event to a merchant's RabbitMQ (amqplib): a pooled connection and confirm channel per
// destination, the stored bytes as the message body, the signature headers (webhook-id, webhook-timestamp,
// webhook-signature, as the HTTP POST carries them) as AMQP headers, the event id as message-id, persistent and
// mandatory, and success only when the broker confirmed it. An unroutable message (no queue bound) comes back
// (basic.return) and is a refused attempt, never a silent loss. The socket goes only where O15 allows (./guard).
import amqp, { type ChannelModel, type ConfirmChannel } from 'amqplib';
import type { brokerSocketGuard } from '../url-safety.js';
import { BrokerRefusedError, PublishTimeoutError } from './outcome.js';
import type { Pooled } from './pool.js';

export interface RabbitConnection extends Pooled {
  publish(body: Buffer, headers: Record<string, string>, eventId: string, timeoutMs: number): Promise<void>;
}

type Guard = ReturnType<typeof brokerSocketGuard>;

export async function openRabbit(
  config: Record<string, string>,
  credentials: Record<string, string>,
  guard: Guard,
  timeoutMs: number,
): Promise<RabbitConnection> {
  guard.check(config.host!);
  const tls = config.tls === 'true';
  let broken = false;
  let gone = false; // the broker or the network closed it: nothing left to close
  const connecting = amqp.connect(
    {
      protocol: tls ? 'amqps' : 'amqp',
      hostname: config.host!,
      port: Number(config.port),
      username: config.username!,
      password: credentials.password ?? '',
      vhost: config.vhost ?? '/',
      heartbeat: 30,
    },
    { timeout: timeoutMs, lookup: guard.lookup, clientProperties: { connection_name: 'apipay-webhooks' } },
  );
  // A connection that opens after its attempt gave up is closed, not leaked.
  const model: ChannelModel = await withTimeout(
    connecting,
    timeoutMs,
    'connecting to the broker',
    (late) => void late.close().catch(() => {}),
  );
  const markBroken = () => void (broken = true);
  model.on('error', markBroken);
  model.on('close', () => void (broken = gone = true));
  let channel: ConfirmChannel;
  try {
    channel = await withTimeout(model.createConfirmChannel(), timeoutMs, 'opening a channel');
  } catch (error) {
    await model.close().catch(() => {});
    throw error;
  }
  channel.on('error', markBroken);
  channel.on('close', markBroken);
  // basic.return of a mandatory message nobody could route arrives before its confirm: remembered by message id.
  const returned = new Map<string, string>();
  const waiting = new Set<string>();
  channel.on('return', (message: { properties: { messageId?: string }; fields: { replyText?: string } }) => {
    const id = message.properties.messageId;
    if (id && waiting.has(id)) returned.set(id, message.fields.replyText ?? 'NO_ROUTE');
  });

  return {
    usable: () => !broken,
    async close() {
      broken = true;
      if (gone) return;
      await channel.close().catch(() => {});
      await model.close().catch(() => {});
    },
    publish(body, headers, eventId, publishTimeoutMs) {
      return withTimeout(
        new Promise<void>((resolve, reject) => {
          waiting.add(eventId);
          const done = (error: Error | null) => {
            waiting.delete(eventId);
            const unroutable = returned.get(eventId);
            returned.delete(eventId);
            if (error) reject(new BrokerRefusedError(`the broker did not confirm the message: ${error.message}`));
            else if (unroutable)
              reject(
                new BrokerRefusedError(
                  `the broker returned the message unroutable (${unroutable}): no queue is bound for exchange '${config.exchange}' and routing key '${config.routing_key}'`,
                ),
              );
            else resolve();
          };
          try {
            channel.publish(
              config.exchange ?? '',
              config.routing_key!,
              body,
              {
                headers,
                messageId: eventId,
                contentType: 'application/json',
                persistent: true,
                mandatory: true,
                timestamp: Math.floor(Date.now() / 1000),
              },
              (error: Error | null) => done(error),
            );
          } catch (error) {
            waiting.delete(eventId);
            reject(error as Error);
          }
        }),
        publishTimeoutMs,
        'waiting for the publisher confirm',
      );
    },
  };
}

export function withTimeout<T>(work: Promise<T>, ms: number, what: string, late?: (value: T) => void): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      if (late) work.then(late, () => {});
      reject(new PublishTimeoutError(`no answer from the broker after ${ms} ms ${what}`));
    }, ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
