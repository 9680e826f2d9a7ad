// A8, M11: the master-key rotation of destination credentials. Like reencryptEndpointSecrets
// (src/outbound/secrets.ts): every endpoint whose sealed credentials name a key other than the current one is
// re-sealed under the current key, in batches; a row changed meanwhile is left for the next run; a row no configured
// key opens is counted in `failed` and left as it is. Afterwards the previous key can be removed.
import { and, asc, eq, gt, inArray, isNotNull, ne } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { webhookEndpoints } from '../../db/schema/index.js';
import { keyringOf, type SecretKeys } from '../../shared/keyring.js';
import { openCredentials, sealCredentials } from './credentials.js';

export async function reencryptDestinationCredentials(
  db: Db,
  keys: SecretKeys,
  options: { endpointIds?: string[]; batch?: number } = {},
): Promise<{ reencrypted: number; failed: number }> {
  const ring = keyringOf(keys);
  let reencrypted = 0;
  let failed = 0;
  let afterId = '';
  for (;;) {
    const rows = await db
      .select({
        id: webhookEndpoints.id,
        ciphertext: webhookEndpoints.destinationCredentials,
        keyId: webhookEndpoints.destinationCredentialsKeyId,
      })
      .from(webhookEndpoints)
      .where(
        and(
          gt(webhookEndpoints.id, afterId),
          isNotNull(webhookEndpoints.destinationCredentials),
          ne(webhookEndpoints.destinationCredentialsKeyId, ring.currentId),
          options.endpointIds ? inArray(webhookEndpoints.id, options.endpointIds) : undefined,
        ),
      )
      .orderBy(asc(webhookEndpoints.id))
      .limit(options.batch ?? 200);
    if (rows.length === 0) return { reencrypted, failed };
    for (const row of rows) {
      let plain: Record<string, string>;
      try {
        plain = openCredentials(row.id, row, ring);
      } catch {
        failed += 1;
        continue;
      }
      const sealed = sealCredentials(row.id, plain, ring);
      const updated = await db
        .update(webhookEndpoints)
        .set({ destinationCredentials: sealed.ciphertext, destinationCredentialsKeyId: sealed.keyId })
        .where(and(eq(webhookEndpoints.id, row.id), eq(webhookEndpoints.destinationCredentials, row.ciphertext!)))
        .returning({ id: webhookEndpoints.id });
      reencrypted += updated.length;
    }
    afterId = rows[rows.length - 1]!.id;
  }
}
