// Admin route for the merchant portal's signed links (C2): an operator gives a merchant a link that opens the portal
// of that one account, expires (default 15 minutes) and is good for nothing else (not an admin API credential).
import { z } from '@hono/zod-openapi';
import { parseDuration } from '../../config/duration.js';
import { createSessionKeys } from '../console/session.js';
import type { ApiDeps } from '../deps.js';
import { ApiError } from '../errors.js';
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
    summary: "A signed link to one merchant account's portal; it expires (default 15m, at most 24h) and opens the portal only",
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
        z.object({ url: z.string(), merchant_account: z.string(), expires_at: z.string() }).openapi('PortalLink'),
        'The link; send it to the merchant',
      ),
      ...errorResponses,
    },
  },
);

export function registerPortalLinks(admin: AdminApp, deps: ApiDeps): void {
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
    const { token, link } = sessions.portalLink(body.merchant_account, Math.floor(ttlMs / 1000));
    const url = new URL(`/portal/enter?token=${encodeURIComponent(token)}`, c.req.url).toString();
    c.get('logger').info(
      { merchantAccount: body.merchant_account, ttlMs, by: c.get('principal').keyId },
      'portal link created (C2)',
    );
    return c.json({ url, merchant_account: link.merchantAccount, expires_at: new Date(link.exp * 1000).toISOString() }, 201);
  });
}
