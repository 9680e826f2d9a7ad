// Admin routes for the merchant portal's signed links (C2, A15): an operator gives a merchant a link that opens the
// portal of that one account once, expires (default 15 minutes), may do no more than its minter may for that account,
// can be revoked (ending the session it opened) and is good for nothing else (not an admin API credential).
import { z } from '@hono/zod-openapi';
import {
  PORTAL_LINK_ID_PATTERN,
  PortalLinkNotFoundError,
  type PortalLinkRow,
  type PortalLinkService,
} from '../../access/portal-links.js';
import { parseDuration } from '../../config/duration.js';
import { createSessionKeys } from '../console/session.js';
import type { ApiDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { publicOrigin } from '../middleware/client-address.js';
import { adminRoute } from './access.js';
import type { AdminApp } from './app.js';
import { errorResponses, json } from './outbound-schemas.js';

export const PORTAL_LINK_DEFAULT_TTL_MS = 15 * 60_000;
const MAX_TTL_MS = 24 * 3_600_000;

const createLink = adminRoute(
  { role: 'operator', merchant: false },
  {
    method: 'post',
    path: '/portal-links',
    tags: ['Merchant portal'],
    summary:
      "A signed, single-use link to one merchant account's portal; it expires (default 15m, at most 24h), its session ends with it, and it can do only what its minter may do for that account",
    request: {
      body: {
        required: true,
        content: {
          'application/json': {
            schema: z
              .strictObject({
                merchant_account: z.string().trim().min(1).max(200),
                ttl: z
                  .string()
                  .optional()
                  .openapi({ description: 'how long the link can be opened: 1m to 24h, e.g. 15m (the default)', example: '15m' }),
              })
              .openapi('CreatePortalLink'),
          },
        },
      },
    },
    responses: {
      201: json(
        z.object({ id: z.string(), url: z.string(), merchant_account: z.string(), expires_at: z.string() }).openapi('PortalLink'),
        'The link; send it to the merchant',
      ),
      ...errorResponses,
    },
  },
);

const linkSchema = z
  .object({
    id: z.string(),
    object: z.literal('portal_link'),
    merchant_account: z.string(),
    created_by: z.string(),
    created_by_role: z.string(),
    created_at: z.string(),
    expires_at: z.string(),
    used_at: z.string().nullable(),
    revoked_at: z.string().nullable(),
    revoked_by: z.string().nullable(),
  })
  .openapi('PortalLinkState');

const revokeLink = adminRoute(
  { role: 'operator', merchant: false },
  {
    method: 'delete',
    path: '/portal-links/{id}',
    tags: ['Merchant portal'],
    summary:
      'Revoke a portal link: it can no longer be opened and the session it opened ends at once; revoking again changes nothing',
    request: {
      params: z.object({
        id: z
          .string()
          .regex(PORTAL_LINK_ID_PATTERN, 'must be a pl_… link id')
          .openapi({ param: { name: 'id', in: 'path' }, example: 'pl_01jd2m3k4n5p6q7r8s9t0v1w2x' }),
      }),
    },
    responses: { 200: json(linkSchema, 'The revoked link'), ...errorResponses },
  },
);

const linkJson = (l: PortalLinkRow): z.infer<typeof linkSchema> => ({
  id: l.id,
  object: 'portal_link',
  merchant_account: l.merchantAccount,
  created_by: l.createdBy,
  created_by_role: l.createdByRole,
  created_at: l.createdAt.toISOString(),
  expires_at: l.expiresAt.toISOString(),
  used_at: l.usedAt?.toISOString() ?? null,
  revoked_at: l.revokedAt?.toISOString() ?? null,
  revoked_by: l.revokedBy,
});

export function registerPortalLinks(admin: AdminApp, deps: ApiDeps, links: PortalLinkService): void {
  const sessions = createSessionKeys(deps.env.SECRETS_ENCRYPTION_KEY, deps.now);
  admin.openapi(createLink, async (c) => {
    const body = c.req.valid('json');
    let ttlMs = PORTAL_LINK_DEFAULT_TTL_MS;
    try {
      if (body.ttl !== undefined) ttlMs = parseDuration(body.ttl);
    } catch {
      throw new ApiError('validation_failed', 'ttl: must be a duration such as 15m or 1h');
    }
    if (ttlMs < 60_000 || ttlMs > MAX_TTL_MS) throw new ApiError('validation_failed', 'ttl: must be between 1m and 24h');
    const row = await links.mint(c.get('principal'), body.merchant_account, ttlMs);
    const { token } = sessions.portalLink(row.merchantAccount, Math.floor(ttlMs / 1000), row.id);
    // A23: on the public URL (behind a TLS proxy the request itself says http).
    const url = new URL(
      `/portal/enter?token=${encodeURIComponent(token)}`,
      publicOrigin(c, deps.profile.http.public_url),
    ).toString();
    c.get('logger').info(
      { merchantAccount: body.merchant_account, ttlMs, linkId: row.id, by: c.get('principal').keyId },
      'portal link created (C2)',
    );
    return c.json({ id: row.id, url, merchant_account: row.merchantAccount, expires_at: row.expiresAt.toISOString() }, 201);
  });

  admin.openapi(revokeLink, async (c) => {
    const { id } = c.req.valid('param');
    try {
      return c.json(linkJson(await links.revoke(c.get('principal'), id)), 200);
    } catch (error) {
      if (error instanceof PortalLinkNotFoundError) throw new ApiError('not_found', error.message);
      throw error;
    }
  });
}
