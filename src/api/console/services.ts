// What the console and portal pages call (C1, C2): the same services the admin API uses, built with the same
// options, and the admin routes' access rules. Pages never call the admin API over HTTP.
import { actorOf, recordAuditEvent, type AuditEntry } from '../../audit/record.js';
import { createApiKeyService, type ApiKeyService } from '../../access/api-keys.js';
import { inboundBacklog, type InboundBacklog } from '../../inbound/backlog.js';
import { createReconciliationAdmin, ResolutionConflictError } from '../../inbound/reconciliation-admin.js';
import type { Logger } from '../../lib/logger.js';
import { DeliveryConflictError, type DeliveryAdmin } from '../../outbound/delivery-admin.js';
import { outboundBacklog, type OutboundBacklog } from '../../outbound/backlog.js';
import { endpointStats, type EndpointStats } from '../../outbound/endpoint-stats.js';
import { createEndpointService, EndpointNotFoundError, type EndpointService } from '../../outbound/endpoints.js';
import { keyringFromEnv } from '../../shared/keyring.js';
import { seesRawBodies, type Principal } from '../../access/roles.js';
import { deliveryNames, type DeliveryNames } from '../../outbound/delivery-names.js';
import { sendTestEvent } from '../admin/endpoint-tests.js';
import type { ApiDeps } from '../deps.js';
import type { ApiServices } from '../services.js';
import { createChartServices, type ChartServices } from './charts/services.js';
import { PageError, type AccessRules } from './context.js';
import type { TraceLinks } from './trace-link.js';
import type { IdpConfig } from '../../config/idp.js';
import { reconciliationTraceId } from '../../inbound/trace-id.js';
import { deliveryTraceId } from '../../outbound/trace-id.js';
import { earlierApprovals } from '../../access/people.js';
import {
  adjustmentProposal,
  approveAdjustment,
  waitingAdjustmentProposals,
  type AdjustmentProposalRow,
} from '../../ledger/adjustment-proposals.js';

export interface ConsoleServices {
  deliveries: DeliveryAdmin;
  reconciliations: ReturnType<typeof createReconciliationAdmin>;
  endpoints: EndpointService;
  endpointStats: (ids: string[]) => Promise<Map<string, EndpointStats>>;
  backlog: () => Promise<{ inbound: InboundBacklog; outbound: OutboundBacklog }>;
  /** C12, C13: the charts' queries behind the per-minute cache. */
  charts: ChartServices;
  keys: ApiKeyService;
  /** C14: the names beside a page's delivery ids (the payment reference only for those who may read bodies). */
  names: (principal: Principal, rows: readonly { endpointId: string; eventPublicId: string }[]) => Promise<DeliveryNames>;
  rules: AccessRules;
  /** A3: an audit row for a console action no admin service records (the CSV export), as the signed-in person. */
  audit: (principal: Principal, entry: Omit<AuditEntry, 'actor'>) => Promise<void>;
  logger: Logger;
  rotationGraceMs: number;
  /** O15, M11: the address policy an endpoint's URL or broker hosts pass at registration (the admin route's). */
  targetPolicy: { allowInsecure: boolean };
  /** M6: a signed ping to the endpoint now; answers the delivery it created. */
  sendTest: (principal: Principal, endpointId: string) => Promise<{ deliveryId: string }>;
  /** Maps the services' refusals to a page: conflicts are 409, a missing endpoint 404; anything else goes on. */
  conflict: (error: unknown) => never;
  /** R18: where a reconciliation's or a delivery's trace is (APIPAY_TRACE_URL). */
  traces: TraceLinks;
  /** A27, A30: the profile's IdP (who may approve, how fresh their second factor must be) and the clock. */
  idp: IdpConfig | undefined;
  now: () => Date;
  /** A5, A30: the ledger adjustments waiting for a second person, and their approval (the admin API's service). */
  adjustments: {
    waiting: (limit: number, payment?: string) => Promise<{ rows: AdjustmentProposalRow[]; total: number }>;
    get: (id: string) => Promise<AdjustmentProposalRow | undefined>;
    approvals: (id: string) => Promise<string[]>;
    approve: (id: string, principal: Principal) => ReturnType<typeof approveAdjustment>;
  };
}

export function createConsoleServices(deps: ApiDeps, api: ApiServices, rules: AccessRules): ConsoleServices {
  const now = deps.now ?? (() => new Date());
  return {
    deliveries: api.deliveryAdmin,
    reconciliations: createReconciliationAdmin({
      db: deps.db,
      temporal: deps.temporal,
      keys: keyringFromEnv(deps.env), // A4: the console's resolutions are signed like the admin API's
      answerWithinMs: deps.profile.inbound.resolution_request_timeout,
    }),
    endpoints: createEndpointService({
      db: deps.db,
      secretsKey: keyringFromEnv(deps.env),
      ...(deps.now ? { now: deps.now } : {}),
    }),
    endpointStats: (ids) => endpointStats(deps.db, ids, now()),
    backlog: async () => ({ inbound: await inboundBacklog(deps.db), outbound: await outboundBacklog(deps.db) }),
    charts: createChartServices(deps.db, now, deps.profile.outbound.recovery),
    keys: createApiKeyService({ db: deps.db, ...(deps.now ? { now: deps.now } : {}) }),
    names: (principal, rows) => deliveryNames(deps.db, rows, { paymentReferences: seesRawBodies(principal) }),
    rules,
    audit: async (principal, entry) => void (await recordAuditEvent(deps.db, { ...entry, actor: actorOf(principal) })),
    logger: deps.logger.child({ surface: 'console' }),
    rotationGraceMs: deps.profile.outbound.secret_rotation_grace,
    targetPolicy: { allowInsecure: deps.profile.outbound.allow_insecure_urls },
    sendTest: (principal, endpointId) => sendTestEvent(deps, principal, endpointId),
    idp: deps.profile.idp,
    now,
    adjustments: {
      waiting: (limit, payment) => waitingAdjustmentProposals(deps.db, limit, payment),
      get: (id) => adjustmentProposal(deps.db, id),
      approvals: (id) => earlierApprovals(deps.db, id),
      approve: (id, principal) =>
        approveAdjustment(deps.db, id, { keyId: principal.keyId, name: principal.name, audit: actorOf(principal) }),
    },
    traces: {
      ...(deps.env.APIPAY_TRACE_URL ? { url: deps.env.APIPAY_TRACE_URL.replace(/\/+$/, '') } : {}),
      reconciliation: (provider, providerEventId) => reconciliationTraceId(deps.db, provider, providerEventId),
      delivery: (eventPublicId) => deliveryTraceId(deps.db, eventPublicId),
    },
    conflict: (error) => {
      if (error instanceof DeliveryConflictError || error instanceof ResolutionConflictError)
        throw new PageError(409, error.message);
      if (error instanceof EndpointNotFoundError) throw new PageError(404, error.message);
      throw error;
    },
  };
}
