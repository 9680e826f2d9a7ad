// A4: the admin API's resolutions (and A5's approvals and cancellations) are sent to the workflow as Temporal
// updates like any other, so the workflow must tell them from one typed into the Temporal UI. The API signs each
// request (HMAC-SHA256) with a key derived from the master key only the API and worker processes hold
// (SECRETS_ENCRYPTION_KEY, A8); the worker's resolution activity verifies it. The signature covers the workflow
// id, the action, the payload and the principal, so a request copied from a history cannot be replayed on another
// reconciliation, turned into another action or re-attributed. A24 (v2): it also covers the issue time, which the
// activity holds against the profile's admin.signed_request_ttl, the server's request id and the client's.
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { keyringOf, type SecretKeys } from '../shared/keyring.js';
import type { ApiRequestProof } from '../shared/inbound.js';

const INFO = 'apipay admin resolution request v1'; // the subkey's purpose; the message itself is v2 (A24)
export type SignedAction = 'resolve' | 'approve' | 'cancel';

/** A purpose-bound subkey: the encryption key itself is never used for anything but encryption. */
const derive = (master: Buffer) => Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), INFO, 32));

/** JSON with sorted keys and no `api` member: the same bytes in the API and the worker. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([k, v]) => k !== 'api' && v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

function message(
  workflowId: string,
  action: SignedAction,
  payload: unknown,
  proof: Omit<ApiRequestProof, 'signature' | 'signingKeyId'>,
): string {
  const { principal, requestId, issuedAt, clientRequestId } = proof;
  return canonical({
    v: 2,
    workflowId,
    action,
    payload,
    principal: { keyId: principal.keyId, name: principal.name, role: principal.role },
    requestId,
    issuedAt,
    clientRequestId: clientRequestId ?? null,
  });
}

export function signRequest(
  keys: SecretKeys,
  workflowId: string,
  action: SignedAction,
  payload: unknown,
  proof: Omit<ApiRequestProof, 'signature' | 'signingKeyId'>,
): ApiRequestProof {
  const ring = keyringOf(keys);
  const key = derive(ring.keys.get(ring.currentId)!);
  const signature = createHmac('sha256', key)
    .update(message(workflowId, action, payload, proof))
    .digest('base64url');
  return {
    principal: { ...proof.principal },
    requestId: proof.requestId,
    issuedAt: proof.issuedAt,
    ...(proof.clientRequestId ? { clientRequestId: proof.clientRequestId } : {}),
    signingKeyId: ring.currentId,
    signature,
  };
}

/** True when `proof` was made by signRequest for exactly this workflow, action and payload (current or previous key). */
export function verifyRequest(
  keys: SecretKeys,
  workflowId: string,
  action: SignedAction,
  payload: unknown,
  proof: ApiRequestProof,
): boolean {
  if (typeof proof?.signature !== 'string' || typeof proof.signingKeyId !== 'string' || !proof.principal) return false;
  if (typeof proof.issuedAt !== 'string') return false; // A24: a v1 proof (no issue time) never verifies
  const master = keyringOf(keys).keys.get(proof.signingKeyId);
  if (!master) return false;
  const expected = createHmac('sha256', derive(master))
    .update(message(workflowId, action, payload, proof))
    .digest();
  const given = Buffer.from(proof.signature, 'base64url');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
