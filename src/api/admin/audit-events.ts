// Admin routes for the audit log (A3): every state-changing admin call, newest or oldest first, filtered by actor,
// action, target and time, with cursor pagination; and the same selection as CSV. Viewer and up; not merchants.
import { z } from '@hono/zod-openapi';
import { listAuditEvents, type AuditEventRow } from '../../audit/list.js';
import { csvLine } from '../../inbound/csv.js';
import type { ApiDeps } from '../deps.js';
import { adminRoute } from './access.js';
import type { AdminApp } from './app.js';
import { errorResponses, json } from './outbound-schemas.js';
import { afterIdOf, listEnvelope, listWindow, page, paginationQuery, windowQuery } from './pagination.js';

const tags = ['Audit'];
const viewer = { role: 'viewer', merchant: false } as const;
const word = (what: string, example: string) =>
  z
    .string()
    .min(1)
    .max(200)
    .regex(/^[\x21-\x7e]+$/, 'printable ASCII')
    .optional()
    .openapi({ description: what, example });

const filterQuery = {
  actor: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .openapi({ description: "an apk_… key id (or bootstrap), or a key's name", example: 'alice' }),
  action: word('e.g. endpoint.update, reconciliation.resolve, api_key.revoke', 'endpoint.update'),
  target_type: word(
    'webhook_endpoint, webhook_delivery, reconciliation, ledger_adjustment, api_key, master_key',
    'webhook_endpoint',
  ),
  target_id: word('the id of the changed object', 'we_01jd2m3k4n5p6q7r8s9t0v1w2x'),
  ...windowQuery,
};

const auditEventSchema = z
  .object({
    id: z.string().openapi({ example: 'aud_01jd2m3k4n5p6q7r8s9t0v1w2x' }),
    object: z.literal('audit_event'),
    at: z.string().openapi({ format: 'date-time' }),
    actor: z.object({
      key_id: z
        .string()
        .nullable()
        .openapi({ description: 'apk_… or bootstrap; null when no ApiPay credential made the change' }),
      name: z.string(),
      role: z.string().nullable(),
      principal_id: z
        .string()
        .nullable()
        .openapi({ description: 'A12: the person or service behind the key (null for bootstrap and Temporal)' }),
      person: z.string().nullable().openapi({ description: "A12: that person's unique name" }),
    }),
    action: z.string(),
    target: z.object({ type: z.string(), id: z.string() }),
    before: z.record(z.string(), z.unknown()).nullable().openapi({ description: 'what the object was (never a secret)' }),
    after: z.record(z.string(), z.unknown()).nullable().openapi({ description: 'what it became (never a secret)' }),
    request_id: z
      .string()
      .nullable()
      .openapi({ description: "the server's id of the admin API request (its X-Request-Id answer)" }),
    client_request_id: z.string().nullable().openapi({ description: 'A24: the X-Request-Id the client sent, if any' }),
    via: z.enum(['api', 'temporal']),
  })
  .openapi('AuditEvent');

const auditEventJson = (r: AuditEventRow): z.infer<typeof auditEventSchema> => ({
  id: r.id,
  object: 'audit_event',
  at: r.at.toISOString(),
  actor: { key_id: r.actorKeyId, name: r.actorName, role: r.actorRole, principal_id: r.actorPrincipalId, person: r.actorPerson },
  action: r.action,
  target: { type: r.targetType, id: r.targetId },
  before: r.before ?? null,
  after: r.after ?? null,
  request_id: r.requestId,
  client_request_id: r.clientRequestId,
  via: r.via as 'api' | 'temporal',
});

const listRoute = adminRoute(viewer, {
  method: 'get',
  path: '/audit-events',
  tags,
  summary: 'The audit log: who changed what, when, before and after (A3), ordered by id (asc or desc), with cursor pagination',
  request: { query: z.strictObject({ ...filterQuery, ...paginationQuery }) },
  responses: { 200: json(listEnvelope(auditEventSchema), 'A page of audit events'), ...errorResponses },
});

const csvRoute = adminRoute(viewer, {
  method: 'get',
  path: '/audit-events.csv',
  tags,
  summary: 'Every audit event of the same filters as CSV (before and after as JSON text)',
  request: { query: z.strictObject(filterQuery) },
  responses: {
    200: { content: { 'text/csv': { schema: z.string() } }, description: 'RFC 4180 CSV with a header line' },
    ...errorResponses,
  },
});

const CSV_COLUMNS = [
  'id',
  'at',
  'actor_key_id',
  'actor_name',
  'actor_role',
  'action',
  'target_type',
  'target_id',
  'before',
  'after',
  'request_id',
  'via',
] as const;
/** Free text a spreadsheet could run as a formula gets the export's guard (src/inbound/csv.ts). */
const CSV_TEXT = new Set(['actor_name', 'before', 'after'].map((n) => CSV_COLUMNS.indexOf(n as never)));

type FilterQuery = {
  actor?: string | undefined;
  action?: string | undefined;
  target_type?: string | undefined;
  target_id?: string | undefined;
};
const filterOf = (q: FilterQuery) => ({
  ...(q.actor !== undefined ? { actor: q.actor } : {}),
  ...(q.action !== undefined ? { action: q.action } : {}),
  ...(q.target_type !== undefined ? { targetType: q.target_type } : {}),
  ...(q.target_id !== undefined ? { targetId: q.target_id } : {}),
});

export function registerAuditEvents(admin: AdminApp, deps: ApiDeps): void {
  admin.openapi(listRoute, async (c) => {
    const q = c.req.valid('query');
    const rows = await listAuditEvents(deps.db, { limit: q.limit, ...listWindow(q), ...filterOf(q), ...afterIdOf(q.cursor) });
    const result = page(rows, q.limit, (r) => r.id);
    return c.json({ ...result, data: result.data.map(auditEventJson) }, 200);
  });

  admin.openapi(csvRoute, async (c) => {
    const q = c.req.valid('query');
    const rows = await listAuditEvents(deps.db, { ...listWindow(q), ...filterOf(q) });
    let body = csvLine([...CSV_COLUMNS]);
    for (const r of rows) {
      const asJson = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));
      body += csvLine(
        [
          r.id,
          r.at.toISOString(),
          r.actorKeyId,
          r.actorName,
          r.actorRole,
          r.action,
          r.targetType,
          r.targetId,
          asJson(r.before),
          asJson(r.after),
          r.requestId,
          r.via,
        ],
        CSV_TEXT,
      );
    }
    return c.body(body, 200, {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': 'attachment; filename="audit-events.csv"',
    }) as never;
  });
}
