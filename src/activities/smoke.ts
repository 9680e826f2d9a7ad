// Activity of the smoke workflow: writes one row, idempotently, so a retried activity changes nothing.
import { activityInfo } from '@temporalio/activity';
import type { Db } from '../db/client.js';
import { smokeRuns } from '../db/schema/index.js';
import type { SmokeInput } from '../shared/smoke.js';

export function createSmokeActivities({ db }: { db: Db }) {
  return {
    async recordSmokeRun(input: SmokeInput): Promise<{ runId: string; writtenAt: string }> {
      const [row] = await db
        .insert(smokeRuns)
        .values({ id: input.runId, note: input.note, workflowId: activityInfo().workflowExecution?.workflowId ?? 'unknown' })
        .onConflictDoUpdate({ target: smokeRuns.id, set: { note: input.note } })
        .returning();
      return { runId: row!.id, writtenAt: row!.writtenAt.toISOString() };
    },
  };
}

export type SmokeActivities = ReturnType<typeof createSmokeActivities>;
