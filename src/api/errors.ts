// The one error shape of the HTTP API: { error: { code, message, requestId } }, from one error class and one mapper.
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { ZodError } from 'zod';

export const ERROR_STATUS = {
  bad_request: 400,
  validation_failed: 400,
  invalid_payload: 400,
  unauthorized: 401,
  invalid_signature: 401,
  /** A27: RFC 9470 step-up: sign in again with a second factor, recently enough (details: max_age, amr). */
  step_up_required: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  unavailable: 503,
  internal: 500,
} as const satisfies Record<string, ContentfulStatusCode>;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    /** Sent as `Retry-After` (seconds), e.g. with a 503 when the ingress sheds load (R5). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
  get status(): ContentfulStatusCode {
    return ERROR_STATUS[this.code];
  }
}

export function errorBody(code: ErrorCode, message: string, requestId?: string, details?: Record<string, unknown>) {
  return { error: { code, message, ...(requestId ? { requestId } : {}), ...(details ? { details } : {}) } };
}

/** Turns a zod error into a message that names the bad field(s), e.g. `url: must be an https URL`. */
export function validationError(error: ZodError, where: string): ApiError {
  const issues = error.issues.map((issue) => ({ field: issue.path.join('.') || where, message: issue.message }));
  const message = issues.map((i) => `${i.field}: ${i.message}`).join('; ');
  return new ApiError('validation_failed', message, { issues });
}

/** The single onError mapper: known errors keep their code; anything else is a 500 without internals. */
export function handleError(error: Error, c: Context): Response {
  const requestId = c.get('requestId' as never) as string | undefined;
  if (error instanceof ApiError) {
    if (error.retryAfterSeconds !== undefined) c.header('Retry-After', String(Math.max(1, Math.ceil(error.retryAfterSeconds))));
    if (error.code === 'step_up_required') {
      c.header(
        'WWW-Authenticate',
        `Bearer error="insufficient_user_authentication", max_age=${Number(error.details?.max_age ?? 0)}`,
      );
    }
    return c.json(errorBody(error.code, error.message, requestId, error.details), error.status);
  }
  // Hono's own validators throw HTTPException 400 for a body that is not JSON: keep the 400, in our shape.
  if (error instanceof HTTPException && error.status === 400) {
    return c.json(errorBody('bad_request', `request body: ${error.message || 'malformed'}`, requestId), 400);
  }
  const logger = c.get('logger' as never) as { error: (o: object, m: string) => void } | undefined;
  logger?.error({ err: error, requestId }, 'unhandled error');
  return c.json(errorBody('internal', 'internal error', requestId), 500);
}
