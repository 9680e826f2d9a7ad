// R20: the `continued` block a reconciliation carries to its next run (continue-as-new) is accepted only if the
// workflow wrote it. The run that continues asks the worker to seal the block: an HMAC-SHA256 over its canonical JSON,
// bound to the workflow id and to that run's id, with a purpose-bound subkey of the master key only the workers and the
// API hold (SECRETS_ENCRYPTION_KEY, parsed once in src/config/env.ts). The next run verifies it against its own
// `continuedFromExecutionRunId`, which only Temporal sets: a start typed into the UI or the CLI continues from no run,
// so no copied or invented block passes, and a block copied from another chain does not name this one.
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { canonical } from '../access/request-signing.js';
import { keyringOf, type SecretKeys } from '../shared/keyring.js';
import type { ContinuedReconciliation } from '../shared/inbound.js';

const INFO = 'apipay reconciliation continuation v1';

/** A subkey for this purpose alone (the encryption key itself is used for nothing but encryption). */
const derive = (master: Buffer) => Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), INFO, 32));

export interface SealScope {
  workflowId: string;
  /** The run that continues (sealing), i.e. the next run's continuedFromExecutionRunId (verifying). */
  runId: string;
}

function mac(key: Buffer, scope: SealScope, continued: ContinuedReconciliation): Buffer {
  const { seal: _seal, ...block } = continued;
  return createHmac('sha256', derive(key))
    .update(canonical({ v: 1, workflowId: scope.workflowId, runId: scope.runId, continued: block }))
    .digest();
}

/** `<key id>.<mac>`: the key id lets a rotated master key still verify the seals of open runs. */
export function sealContinuation(keys: SecretKeys, scope: SealScope, continued: ContinuedReconciliation): string {
  const ring = keyringOf(keys);
  return `${ring.currentId}.${mac(ring.keys.get(ring.currentId)!, scope, continued).toString('base64url')}`;
}

/** True only for a seal sealContinuation made for exactly this block, workflow and run. */
export function verifyContinuation(keys: SecretKeys, scope: SealScope | null, continued: ContinuedReconciliation): boolean {
  const seal = continued.seal;
  if (!scope || typeof seal !== 'string') return false;
  const dot = seal.indexOf('.');
  const master = keyringOf(keys).keys.get(seal.slice(0, dot));
  if (dot < 1 || !master) return false;
  const expected = mac(master, scope, continued);
  const given = Buffer.from(seal.slice(dot + 1), 'base64url');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
