// The ISO 8601 date-time of admin query strings and bodies (exports, ledger check, recover): with an offset, and
// R21 within 0001-01-01 to 9999-12-31, the instants PostgreSQL stores, so that none reaches a query as a 500.
import { z } from '@hono/zod-openapi';
import { storableInstant } from '../../shared/operator-date.js';

export const isoDateTime = () =>
  z.iso
    .datetime({ offset: true, message: 'must be an ISO 8601 date-time' })
    .refine((text) => storableInstant(Date.parse(text)), { message: 'must be an ISO 8601 date-time between 0001 and 9999' });
