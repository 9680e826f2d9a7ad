// A4: who sent a resolution, approval or cancellation. The admin API signs its requests (src/access/
// request-signing.ts): a valid signature names the API key's principal. Without one the request came through
// Temporal directly (the Temporal UI, `temporal workflow update/signal`): it is refused when the profile denies
// that way, else attributed to the identity Temporal recorded with the request in the workflow history (the
// accepted update's request meta identity, or the signal event's identity). A payload's own words (`operator`,
// a made-up `api` block) never decide who it was. A24: a signed request is also refused when the workflow accepted
// it after admin.signed_request_ttl, or when its key was revoked by then (src/access/request-freshness.ts).
import { staleProblem } from '../access/request-freshness.js';
import { verifyRequest, type SignedAction } from '../access/request-signing.js';
import type { SecretKeys } from '../shared/keyring.js';
import type { ApiRequestProof, ResolutionPrincipal } from '../shared/inbound.js';

/** Where the request is in the workflow history: an update by id, or the n-th operatorResolution signal of the run. */
export interface RequestOrigin {
  runId: string;
  via: 'update' | 'signal';
  updateId?: string;
  signalIndex?: number;
}

export interface AccessDeps {
  keys: SecretKeys;
  viaTemporal: 'allow' | 'deny' | 'idp';
  /** A31: under `idp`, the issuer whose subjects ApiPay's Temporal server stamps (the profile's idp.issuer). */
  stampIssuer: string | null;
  /** The identity Temporal recorded for the request at `origin` of workflow `workflowId`, or null. */
  identityOf: (workflowId: string, origin: RequestOrigin) => Promise<string | null>;
  /** A24: how long a signed request stays good after its issue time (profile admin.signed_request_ttl). */
  ttlMs: number;
  /** A24: when Temporal recorded the request at `origin` (epoch ms), or null when it is not in the history. */
  acceptedAt: (workflowId: string, origin: RequestOrigin) => Promise<number | null>;
  /** A24: why the key could not sign as `role` at `atMs` (revoked, another role, no person), or null. */
  keyProblem: (keyId: string, role: string, atMs: number) => Promise<string | null>;
}

export type Authorized = { ok: true; principal: ResolutionPrincipal } | { ok: false; problem: string };

const STAFF = new Set(['operator', 'admin']);

export async function authorize(
  deps: AccessDeps,
  request: {
    workflowId: string;
    action: SignedAction;
    payload: unknown;
    proof: ApiRequestProof | undefined;
    origin: RequestOrigin;
  },
): Promise<Authorized> {
  const { proof } = request;
  if (proof !== undefined) {
    if (!verifyRequest(deps.keys, request.workflowId, request.action, request.payload, proof)) {
      return {
        ok: false,
        problem: 'the request carries an admin API signature that does not verify: refused (nothing was written)',
      };
    }
    if (!STAFF.has(proof.principal.role))
      return { ok: false, problem: `role ${proof.principal.role} may not ${request.action} resolutions` };
    const acceptedAt = await deps.acceptedAt(request.workflowId, request.origin);
    if (acceptedAt === null) return { ok: false, problem: 'the request is not in the workflow history: refused' };
    const problem =
      staleProblem(proof.issuedAt, acceptedAt, deps.ttlMs) ??
      (await deps.keyProblem(proof.principal.keyId, proof.principal.role, acceptedAt));
    if (problem) return { ok: false, problem };
    return {
      ok: true,
      principal: {
        key: proof.principal.keyId,
        name: proof.principal.name,
        role: proof.principal.role,
        via: 'api',
        requestId: proof.requestId,
        ...(proof.clientRequestId ? { clientRequestId: proof.clientRequestId } : {}),
      },
    };
  }
  if (deps.viaTemporal === 'deny') {
    return {
      ok: false,
      problem:
        'resolutions sent to Temporal directly are switched off (profile inbound.resolution_via_temporal: deny): use the admin API',
    };
  }
  const identity = (await deps.identityOf(request.workflowId, request.origin))?.trim();
  if (!identity) return { ok: false, problem: 'the request carries no identity in the workflow history: refused' };
  if (deps.viaTemporal === 'idp') return stampedPerson(identity, deps.stampIssuer, request.origin);
  const name = [...identity].slice(0, 200).join('');
  return {
    ok: true,
    principal: { key: `temporal:${name}`, name, role: null, via: 'temporal', requestId: request.origin.updateId ?? null },
  };
}

/**
 * A31: under `resolution_via_temporal: idp` the history's identity is the one ApiPay's Temporal server wrote over
 * whatever the client sent (`idp:<sub>@<issuer>`, scripts/go/temporal-server/identity.go), so it is that IdP person:
 * the principal's key is their `idp:` key, the one their admin API and console sessions act under, and dual control
 * and budgets count it as them. Any other identity (a client's own words, another issuer) is refused. Such a person
 * still approves nothing through Temporal (no proof of a fresh second factor travels with a signal).
 */
function stampedPerson(identity: string, issuer: string | null, origin: RequestOrigin): Authorized {
  const suffix = `@${issuer ?? ''}`;
  const subject = identity.startsWith('idp:') && issuer ? identity.slice(4, -suffix.length) : '';
  if (!identity.endsWith(suffix) || subject === '' || subject.length > 200) {
    return {
      ok: false,
      problem: `under inbound.resolution_via_temporal: idp only a person ApiPay's Temporal server signed in (identity idp:<subject>@${issuer ?? '?'}) may resolve through Temporal: refused`,
    };
  }
  return {
    ok: true,
    principal: { key: identity, name: subject, role: null, via: 'temporal', requestId: origin.updateId ?? null },
  };
}

/** google.protobuf.Timestamp as the SDK decodes it (seconds may be a Long). */
interface TimestampLike {
  seconds?: unknown;
  nanos?: number | null;
}

/** Minimal shape of a history the activity fetched (temporal.api.history.v1.History). */
interface HistoryLike {
  events?: Array<{
    eventTime?: TimestampLike | null;
    workflowExecutionSignaledEventAttributes?: { signalName?: string | null; identity?: string | null } | null;
    workflowExecutionUpdateAcceptedEventAttributes?: {
      acceptedRequest?: { meta?: { updateId?: string | null; identity?: string | null } | null } | null;
    } | null;
  }> | null;
}

/** The event of the request at `origin` in a run's history: the accepted update, or the n-th signal of its name. */
function requestEvent(history: HistoryLike, origin: RequestOrigin, signalName: string) {
  const events = history.events ?? [];
  if (origin.via === 'update') {
    return events.find((e) => {
      const meta = e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.meta;
      return meta !== null && meta !== undefined && meta.updateId === origin.updateId;
    });
  }
  const signals = events.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === signalName);
  return signals[origin.signalIndex ?? -1];
}

/** The identity of the request at `origin` in a run's history, or null when it is not there. */
export function identityIn(history: HistoryLike, origin: RequestOrigin, signalName = 'operatorResolution'): string | null {
  const event = requestEvent(history, origin, signalName);
  if (!event) return null;
  return origin.via === 'update'
    ? (event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.meta?.identity ?? null)
    : (event.workflowExecutionSignaledEventAttributes?.identity ?? null);
}

/** A24: when the server recorded the request at `origin` (epoch ms), or null when it is not there. */
export function acceptedAtIn(history: HistoryLike, origin: RequestOrigin, signalName = 'operatorResolution'): number | null {
  const time = requestEvent(history, origin, signalName)?.eventTime;
  if (!time || time.seconds === undefined || time.seconds === null) return null;
  const ms = Number(String(time.seconds)) * 1000 + Math.floor((time.nanos ?? 0) / 1e6);
  return Number.isFinite(ms) ? ms : null;
}
