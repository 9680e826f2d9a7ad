// Which merchant account an admin request is about (A1): a merchant key's own, a staff key's named one.
import { z } from '@hono/zod-openapi';
import { scopeOf, type Principal } from '../../access/roles.js';
import { ApiError } from '../errors.js';

export const accountParam = z
  .string()
  .min(1)
  .max(200)
  .optional()
  .openapi({ description: 'staff keys: the account (required); a merchant key: its own (default)' });

/** A merchant key: its own account (another one does not exist for it); a staff key must name one. */
export function accountOf(principal: Principal, requested: string | undefined): string {
  const own = scopeOf(principal);
  if (own !== undefined) {
    if (requested !== undefined && requested !== own) throw new ApiError('not_found', 'merchant account does not exist');
    return own;
  }
  if (requested === undefined) {
    throw new ApiError('validation_failed', 'merchant_account: required with a staff key', {
      issues: [{ field: 'merchant_account', message: 'required with a staff key' }],
    });
  }
  return requested;
}
