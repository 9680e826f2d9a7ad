// The typed variables of a request's Hono context: set by middleware, read by routes without casts.
import type { Principal } from '../access/roles.js';
import type { Logger } from '../lib/logger.js';

/**
 * Every request: its id (the server's, X-Request-Id), the client's own X-Request-Id when it sent one (A24), and the
 * process logger (set by src/api/app.ts and middleware/request-id.ts).
 */
export interface AppEnv {
  Variables: { requestId: string; clientRequestId?: string; logger: Logger };
}

/** Admin API requests, once authenticated: the principal the credential stands for (A1). */
export interface AdminEnv {
  Variables: AppEnv['Variables'] & { principal: Principal };
}
