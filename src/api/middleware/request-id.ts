// Gives every request an id of the server's (echoed in X-Request-Id and in error bodies, written in audit rows) so
// operators can find its log lines. A24: a client's own X-Request-Id never becomes that id (a client could otherwise
// choose, or reuse, the request id of an audit row); a well-formed one is kept beside it as the client request id
// (echoed in X-Client-Request-Id, stored in audit rows' client_request_id).
import { randomUUID } from 'node:crypto';
import { createMiddleware } from 'hono/factory';

export const requestId = () =>
  createMiddleware(async (c, next) => {
    const incoming = c.req.header('x-request-id');
    const id = randomUUID();
    c.set('requestId' as never, id as never);
    c.header('X-Request-Id', id);
    if (incoming && /^[\w.-]{1,128}$/.test(incoming)) {
      c.set('clientRequestId' as never, incoming as never);
      c.header('X-Client-Request-Id', incoming);
    }
    await next();
  });
