// A4: who sent a resolution, approval or cancellation. The admin API signs its requests (src/access/
// request-signing.ts): a valid signature names the API key's principal. Without one the request came through
// Temporal directly (the Temporal UI, `temporal workflow update/signal`): it is refused when the profile denies
// that way, else attributed to the identity Temporal recorded with the request in the workflow history (the
// accepted update's request meta identity, or the signal event's identity). A payload's own words (`operator`,
// a made-up `api` block) never decide who it was.
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
  viaTemporal: 'allow' | 'deny';
  /** The identity Temporal recorded for the request at `origin` of workflow `workflowId`, or null. */
  identityOf: (workflowId: string, origin: RequestOrigin) => Promise<string | null>;
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
    return {
      ok: true,
      principal: {
        key: proof.principal.keyId,
        name: proof.principal.name,
        role: proof.principal.role,
        via: 'api',
        requestId: proof.requestId,
      },
    };
  }
  if (deps.viaTemporal !== 'allow') {
    return {
      ok: false,
      problem:
        'resolutions sent to Temporal directly are switched off (profile inbound.resolution_via_temporal: deny): use the admin API',
    };
  }
  const identity = (await deps.identityOf(request.workflowId, request.origin))?.trim();
  if (!identity) return { ok: false, problem: 'the request carries no identity in the workflow history: refused' };
  const name = [...identity].slice(0, 200).join('');
  return {
    ok: true,
    principal: { key: `temporal:${name}`, name, role: null, via: 'temporal', requestId: request.origin.updateId ?? null },
  };
}

/** Minimal shape of a history the activity fetched (temporal.api.history.v1.History). */
interface HistoryLike {
  events?: Array<{
    workflowExecutionSignaledEventAttributes?: { signalName?: string | null; identity?: string | null } | null;
    workflowExecutionUpdateAcceptedEventAttributes?: {
      acceptedRequest?: { meta?: { updateId?: string | null; identity?: string | null } | null } | null;
    } | null;
  }> | null;
}

/** The identity of the request at `origin` in a run's history, or null when it is not there. */
export function identityIn(history: HistoryLike, origin: RequestOrigin, signalName = 'operatorResolution'): string | null {
  const events = history.events ?? [];
  if (origin.via === 'update') {
    for (const event of events) {
      const meta = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.meta;
      if (meta && meta.updateId === origin.updateId) return meta.identity ?? null;
    }
    return null;
  }
  const signals = events.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === signalName);
  return signals[origin.signalIndex ?? -1]?.workflowExecutionSignaledEventAttributes?.identity ?? null;
}
