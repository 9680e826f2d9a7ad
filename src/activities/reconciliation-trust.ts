// R20: a reconciliation's first step, and the seal of the block it carries to its next run. The workflow trusts
// nothing of its start input until this read-only step has found, in PostgreSQL, the receipt the ingress wrote for
// (provider, provider event id) and the event equal to what the receipt's raw bytes say, the workflow id the one that
// event derives, no closed reconciliation under that id, and any `continued` block sealed by the run it continues
// from. Its answer carries the rules and settings of this worker's profile, so they enter the history once (the
// step's recorded result) and a replay sees them; the start input's are never read.
import { and, eq } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import type { Profile } from '../config/profile.js';
import type { Logger } from '../lib/logger.js';
import { reconciliations, webhookReceipts } from '../db/schema/index.js';
import { sealContinuation, verifyContinuation } from '../inbound/continuation-seal.js';
import { eventMismatch } from '../inbound/receipt-match.js';
import { reconciliationSettings } from '../inbound/start.js';
import { createProviderRegistry, PayloadError } from '../providers/index.js';
import { reconciliationWorkflowId } from '../shared/ids.js';
import type { SecretKeys } from '../shared/keyring.js';
import type {
  ContinuedReconciliation,
  NormalizedProviderEvent,
  ReconciliationRules,
  ReconciliationStartCheck,
} from '../shared/inbound.js';

export interface ReconciliationTrustDeps {
  db: Db;
  profile: Profile;
  logger: Logger;
  secretsKey: SecretKeys;
  /** The state machine this worker runs (config/reconciliation-states.yaml, read once at start). */
  rules: ReconciliationRules;
}

export interface StartCheckRequest {
  reconciliationId: string;
  /** The run this one continues from (Temporal's continuedFromExecutionRunId); absent for a first run. */
  continuedFromRunId?: string;
  provider: unknown;
  receiptId: unknown;
  event: unknown;
  continued?: ContinuedReconciliation;
}

export function createReconciliationTrustActivities(deps: ReconciliationTrustDeps) {
  const { db, profile, logger, rules } = deps;
  const adapters = createProviderRegistry(profile.inbound.providers);
  const settings = reconciliationSettings(profile);

  async function problemOf(request: StartCheckRequest): Promise<string | null> {
    const { provider, event } = request;
    if (typeof provider !== 'string' || !adapters.has(provider))
      return `provider ${JSON.stringify(provider)} is not in this worker's profile`;
    const eventId = (event as { providerEventId?: unknown } | null)?.providerEventId;
    if (typeof eventId !== 'string') return 'the start input names no provider event id';
    if (request.reconciliationId !== reconciliationWorkflowId(provider, eventId))
      return `the workflow id of ${provider} event ${eventId} is ${reconciliationWorkflowId(provider, eventId)}, not ${request.reconciliationId}`;
    const [receipt] = await db
      .select({ id: webhookReceipts.id, rawBody: webhookReceipts.rawBody })
      .from(webhookReceipts)
      .where(and(eq(webhookReceipts.provider, provider), eq(webhookReceipts.providerEventId, eventId)));
    if (!receipt) return `no receipt for ${provider} event ${eventId}: only a verified webhook starts a reconciliation`;
    if (request.receiptId !== receipt.id)
      return `receiptId ${JSON.stringify(request.receiptId)} is not the receipt of this event (${receipt.id})`;
    let stored: NormalizedProviderEvent;
    try {
      stored = adapters.get(provider)!.extract(receipt.rawBody);
    } catch (error) {
      if (error instanceof PayloadError) return `the receipt of ${provider} event ${eventId} cannot be read (${error.reason})`;
      throw error;
    }
    const differ = eventMismatch(stored, event);
    if (differ.length > 0) return `the event differs from its receipt in ${differ.join(', ')}`;
    const [projection] = await db
      .select({ state: reconciliations.state })
      .from(reconciliations)
      .where(eq(reconciliations.id, request.reconciliationId));
    if (!request.continued) {
      if (projection)
        return `reconciliation ${request.reconciliationId} already exists (state ${projection.state}): a new start under its id changes nothing`;
      return null;
    }
    const scope = request.continuedFromRunId ? { workflowId: request.reconciliationId, runId: request.continuedFromRunId } : null;
    if (!verifyContinuation(deps.secretsKey, scope, request.continued))
      return 'the continued block was not written by this workflow (its seal is missing or does not match)';
    if (!projection || rules.terminal.includes(projection.state as never))
      return `reconciliation ${request.reconciliationId} is ${projection ? `already ${projection.state}` : 'not recorded'}: a continued run changes nothing`;
    return null;
  }

  return {
    /** Read-only: the same answer however often it runs (R13 keeps the first one for a re-run of its task anyway). */
    async checkReconciliationStart(request: StartCheckRequest): Promise<ReconciliationStartCheck> {
      const problem = await problemOf(request);
      if (problem === null) return { outcome: 'trusted', rules, settings };
      logger.warn({ reconciliationId: request.reconciliationId, problem }, 'reconciliation start refused (R20)');
      return { outcome: 'refused', reason: problem };
    },

    /** The seal of the block this run carries to its next (pure: no I/O). */
    async sealReconciliationContinuation(request: {
      reconciliationId: string;
      runId: string;
      continued: ContinuedReconciliation;
    }): Promise<{ seal: string }> {
      return {
        seal: sealContinuation(
          deps.secretsKey,
          { workflowId: request.reconciliationId, runId: request.runId },
          request.continued,
        ),
      };
    },
  };
}

export type ReconciliationTrustActivities = ReturnType<typeof createReconciliationTrustActivities>;
