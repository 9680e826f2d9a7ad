// Gives every request an id (echoed in X-Request-Id and in error bodies) so operators can find its log lines.
import { randomUUID } from 'node:crypto';
import { createMiddleware } from 'hono/factory';

export const requestId = () =>
  createMiddleware(async (c, next) => {
    const incoming = c.req.header('x-request-id');
    const id = incoming && /^[\w.-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    c.set('requestId' as never, id as never);
    c.header('X-Request-Id', id);
    await next();
  });
