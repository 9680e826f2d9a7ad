// M11: the `rabbitmq` destination described once (./fields.ts): an AMQP 0-9-1 broker of the merchant's, published to
// with publisher confirms on an exchange and routing key (the default exchange '' and the queue's name as routing key
// publish straight to a queue). The password is secret.
import { z } from 'zod';
import { bool, hostName, port, type DestinationDescription } from './fields.js';

export const rabbitmqDestination: DestinationDescription = {
  type: 'rabbitmq',
  label: 'RabbitMQ',
  help: 'Publish each event to an exchange (or straight to a queue) on your RabbitMQ broker, with publisher confirms',
  fields: [
    { name: 'host', label: 'Host', help: 'the broker host', required: true, example: 'rabbit.example.com', check: hostName },
    { name: 'port', label: 'Port', help: 'the AMQP port', required: false, default: '5672', check: port },
    {
      name: 'vhost',
      label: 'Virtual host',
      help: 'the virtual host',
      required: false,
      default: '/',
      check: z.string().min(1).max(255),
    },
    {
      name: 'username',
      label: 'Username',
      help: 'the AMQP user',
      required: true,
      example: 'apipay',
      check: z.string().min(1).max(255),
    },
    {
      name: 'password',
      label: 'Password',
      help: "the AMQP user's password",
      required: true,
      secret: true,
      check: z.string().min(1).max(1024),
    },
    {
      name: 'exchange',
      label: 'Exchange',
      help: "the exchange ('' = the default exchange, which routes to the queue named by the routing key)",
      required: false,
      default: '',
      check: z.string().max(255),
    },
    {
      name: 'routing_key',
      label: 'Routing key',
      help: 'the routing key (the queue name with the default exchange)',
      required: true,
      example: 'apipay-events',
      check: z.string().min(1).max(255),
    },
    { name: 'tls', label: 'TLS', help: 'connect with TLS (amqps)', required: false, default: 'false', check: bool },
  ],
  locator: (c) => {
    const scheme = c.tls === 'true' ? 'amqps' : 'amqp';
    const target = c.exchange ? `exchange=${encodeURIComponent(c.exchange)}&routing_key=` : 'queue=';
    return `${scheme}://${c.host}:${c.port}/${encodeURIComponent(c.vhost ?? '/')}?${target}${encodeURIComponent(c.routing_key ?? '')}`;
  },
};
