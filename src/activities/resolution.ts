// The operator-resolution activity (R2): one PostgreSQL transaction for ledger posting, audit row and state
// transition (src/inbound/resolution-store.ts). A refusal comes back as an answer, so it is never retried.
import type { Db } from '../db/client.js';
import type { Logger } from '../lib/logger.js';
import { commitResolution, type ResolutionCommand, type ResolutionCommit } from '../inbound/resolution-store.js';
import { ledgerMutations, reconciliationTransitions as transitionsMetric, terminalRejected } from '../metrics/inbound-ledger.js';

export function createResolutionActivities(deps: { db: Db; logger: Logger }) {
  return {
    async commitOperatorResolution(command: ResolutionCommand): Promise<ResolutionCommit> {
      const result = await commitResolution(deps.db, command);
      if (result.status === 'refused') {
        // The problem names fields and codes, never the operator's text.
        deps.logger.warn({ reconciliationId: command.reconciliationId, problem: result.problem }, 'operator resolution refused');
      } else if (!result.replayed) {
        transitionsMetric.inc({ to: result.state, actor: 'operator' });
        if (result.state === 'rejected') terminalRejected.inc({ actor: 'operator' });
        if (result.ledgerTransactionId && command.postingKind) ledgerMutations.inc({ kind: command.postingKind, result: 'posted' });
      }
      return result;
    },
  };
}
