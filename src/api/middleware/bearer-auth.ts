// Admin authentication: `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time; 401 otherwise.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createMiddleware } from 'hono/factory';
import { ApiError } from '../errors.js';

const digest = (value: string) => createHash('sha256').update(value).digest();

export const bearerAuth = (token: string) => {
  const expected = digest(token);
  return createMiddleware(async (c, next) => {
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer (.+)$/i.exec(header);
    // Hashing first gives equal-length buffers, so the comparison time does not depend on the guess.
    if (!match || !timingSafeEqual(digest(match[1]!), expected)) {
      c.header('WWW-Authenticate', 'Bearer realm="apipay-admin"');
      throw new ApiError('unauthorized', 'a valid bearer token is required');
    }
    await next();
  });
};
