// Admin route for the master-key rotation of endpoint secrets (A8): re-seal every secret with the current key, so
// the previous keys (SECRETS_ENCRYPTION_PREVIOUS_KEYS) can be removed afterwards; M11: and every endpoint's sealed
// destination credentials (counted in the same totals). Idempotent; admin only.
import { z } from '@hono/zod-openapi';
import { actorOf, recordAuditEvent } from '../../audit/record.js';
import { keyringFromEnv } from '../../shared/keyring.js';
import { reencryptEndpointSecrets } from '../../outbound/secrets.js';
import { reencryptDestinationCredentials } from '../../outbound/destinations/reencrypt.js';
import type { ApiDeps } from '../deps.js';
import { adminRoute } from './access.js';
import type { AdminApp } from './app.js';
import { errorResponses } from './outbound-schemas.js';

const reencrypt = adminRoute(
  { role: 'admin', merchant: false },
  {
    method: 'post',
    path: '/secrets/reencrypt',
    tags: ['Secrets'],
    summary: 'Re-encrypt every endpoint secret with the current master key (run after adding a new key, before removing the old one)',
    responses: {
      200: {
        content: { 'application/json': { schema: z.object({ reencrypted: z.number().int(), failed: z.number().int().openapi({ description: 'rows no configured key decrypts, left as they are' }), key_id: z.string() }).openapi('ReencryptResult') } },
        description: 'How many secrets moved to the current key',
      },
      ...errorResponses,
    },
  },
);

export function registerSecrets(admin: AdminApp, deps: ApiDeps): void {
  const keyring = keyringFromEnv(deps.env);
  admin.openapi(reencrypt, async (c) => {
    const secrets = await reencryptEndpointSecrets(deps.db, keyring);
    const destinations = await reencryptDestinationCredentials(deps.db, keyring); // M11: sealed broker credentials too
    const reencrypted = secrets.reencrypted + destinations.reencrypted;
    const failed = secrets.failed + destinations.failed;
    // A3: the run spans many batches, not one transaction; its row records what it did once it is done.
    await recordAuditEvent(deps.db, { actor: actorOf(c.get('principal')), action: 'secrets.reencrypt', target: { type: 'master_key', id: keyring.currentId }, after: { reencrypted, failed } });
    c.get('logger').info({ reencrypted, failed, keyId: keyring.currentId, by: c.get('principal').keyId }, 'endpoint secrets re-encrypted (A8)');
    return c.json({ reencrypted, failed, key_id: keyring.currentId }, 200);
  });
}
