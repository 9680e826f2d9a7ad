// Admin routes for API keys (A1): create (the token is in this response only), list, revoke. Admin only.
import { z } from '@hono/zod-openapi';
import { ApiKeyNotFoundError, BootstrapLimitError, KEY_ID_PATTERN, type ApiKeyRow, type ApiKeyService } from '../../access/api-keys.js';
import { ROLES } from '../../access/roles.js';
import { ApiError } from '../errors.js';
import { adminRoute } from './access.js';
import type { AdminApp } from './app.js';
import { errorResponses, json } from './outbound-schemas.js';
import { afterIdOf, listEnvelope, page, paginationQuery } from './pagination.js';

const tags = ['API keys'];
const admin = { role: 'admin', merchant: false } as const;
const iso = z.string().openapi({ format: 'date-time' });

const apiKeySchema = z
  .object({
    id: z.string().openapi({ example: 'apk_01jd2m3k4n5p6q7r8s9t0v1w2x' }),
    object: z.literal('api_key'),
    name: z.string(),
    role: z.enum(ROLES),
    merchant_account: z.string().nullable(),
    created_at: iso,
    created_by: z.string().openapi({ description: 'id of the key that created it, or bootstrap (ADMIN_TOKEN)' }),
    principal_id: z.string().openapi({ description: 'A12: the person or service the key belongs to (prn_…)' }),
    revoked_at: iso.nullable(),
    revoked_by: z.string().nullable(),
  })
  .openapi('ApiKey');

const createdSchema = apiKeySchema
  .extend({ token: z.string().openapi({ description: 'apk_…_… bearer token. Shown only in this response: store it now.' }) })
  .openapi('ApiKeyWithToken');

const createBody = z
  .strictObject({
    name: z.string().trim().min(1).max(200),
    role: z.enum(ROLES),
    merchant_account: z.string().min(1).max(200).optional().openapi({ description: 'required for role merchant, refused otherwise' }),
    person: z.string().trim().min(1).max(200).optional().openapi({
      description: 'A12: the person (or service) the key belongs to, by unique name: found, or created; absent: the key name',
    }),
    kind: z.enum(['human', 'service']).optional().openapi({ description: 'A12: of a person created here (default human; merchant keys service)' }),
  })
  .refine((b) => (b.role === 'merchant') === (b.merchant_account !== undefined), {
    message: 'merchant_account is required for role merchant and only for it',
    path: ['merchant_account'],
  })
  .openapi('CreateApiKey');

const idParams = z.object({
  id: z.string().regex(KEY_ID_PATTERN, 'must be an apk_… key id').openapi({ param: { name: 'id', in: 'path' }, example: 'apk_01jd2m3k4n5p6q7r8s9t0v1w2x' }),
});

const createKey = adminRoute(admin, {
  method: 'post',
  path: '/api-keys',
  tags,
  summary: 'Create an API key for a person or a merchant; the token is shown only in this response',
  request: { body: { content: { 'application/json': { schema: createBody } }, required: true } },
  responses: { 201: json(createdSchema, 'Created'), ...errorResponses },
});

const listKeys = adminRoute(admin, {
  method: 'get',
  path: '/api-keys',
  tags,
  summary: 'List API keys (never their secrets), ordered by id, with cursor pagination',
  request: { query: z.strictObject({ include_revoked: z.enum(['true', 'false']).default('false'), ...paginationQuery }) },
  responses: { 200: json(listEnvelope(apiKeySchema), 'A page of API keys'), ...errorResponses },
});

const revokeKey = adminRoute(admin, {
  method: 'post',
  path: '/api-keys/{id}/revoke',
  tags,
  summary: 'Revoke an API key: it stops working at once; revoking again changes nothing',
  request: { params: idParams },
  responses: { 200: json(apiKeySchema, 'The revoked key'), ...errorResponses },
});

const keyJson = (row: ApiKeyRow): z.infer<typeof apiKeySchema> => ({
  id: row.id,
  object: 'api_key',
  name: row.name,
  role: row.role as z.infer<typeof apiKeySchema>['role'],
  merchant_account: row.merchantAccount,
  created_at: row.createdAt.toISOString(),
  created_by: row.createdBy,
  principal_id: row.principalId,
  revoked_at: row.revokedAt?.toISOString() ?? null,
  revoked_by: row.revokedBy,
});

export function registerApiKeys(app: AdminApp, keys: ApiKeyService): void {
  app.openapi(createKey, async (c) => {
    const body = c.req.valid('json');
    const principal = c.get('principal');
    const { key, token } = await keys
      .create(principal, { name: body.name, role: body.role, merchantAccount: body.merchant_account ?? null, person: body.person, kind: body.kind })
      .catch((error) => {
        if (error instanceof BootstrapLimitError) throw new ApiError('forbidden', error.message);
        throw error;
      });
    c.get('logger').info({ keyId: key.id, role: key.role, merchantAccount: key.merchantAccount, by: principal.keyId }, 'api key created (A1)');
    return c.json({ ...keyJson(key), token }, 201);
  });

  app.openapi(listKeys, async (c) => {
    const q = c.req.valid('query');
    const rows = await keys.list({ limit: q.limit, includeRevoked: q.include_revoked === 'true', ...afterIdOf(q.cursor) });
    const result = page(rows, q.limit, (r) => r.id);
    return c.json({ ...result, data: result.data.map(keyJson) }, 200);
  });

  app.openapi(revokeKey, async (c) => {
    const { id } = c.req.valid('param');
    const principal = c.get('principal');
    const key = await keys.revoke(principal, id).catch((error) => {
      if (error instanceof ApiKeyNotFoundError) throw new ApiError('not_found', error.message);
      throw error;
    });
    c.get('logger').info({ keyId: id, by: principal.keyId }, 'api key revoked (A1)');
    return c.json(keyJson(key), 200);
  });
}
