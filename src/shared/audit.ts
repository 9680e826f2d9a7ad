// Who made a change, as the audit log records it (A3), in the shared folder because a resolution carries it
// through the reconciliation workflow to the activity that commits it (types only: workflows may name them).

/** How the change reached us: the admin API, or a signal/update sent to a workflow directly (A4). */
export type AuditVia = 'api' | 'temporal';

/** keyId and role are null only when no ApiPay credential made the change (a Temporal signal, A4). */
export interface AuditActor {
  keyId: string | null;
  name: string;
  role: string | null;
  /** The server's id of the admin API request (its X-Request-Id answer), or null. */
  requestId: string | null;
  /** A24: the X-Request-Id the client sent with it, when it sent one. */
  clientRequestId?: string | null;
  via: AuditVia;
}

/**
 * What the audit log reads from an authenticated principal (src/access/roles.ts `Principal` has these fields), so
 * the audit room names no type of the access room above it.
 */
export interface AuditPrincipal {
  keyId: string;
  name: string;
  role: string;
  requestId?: string;
  clientRequestId?: string;
}
