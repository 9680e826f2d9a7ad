// The smoke slice's batch handler: each message {runId, note} starts smokeWorkflow (id smoke:<runId>) idempotently.
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { BatchHandler } from '../kafka/types.js';
import type { SmokeInput } from '../shared/smoke.js';

export function createSmokeHandler({ temporal, taskQueue }: { temporal: Client; taskQueue: string }): BatchHandler {
  return async (batch) => {
    await Promise.all(
      batch.messages.map(async (message) => {
        const input = JSON.parse(message.value?.toString('utf8') ?? '{}') as SmokeInput;
        try {
          await temporal.workflow.start('smokeWorkflow', { taskQueue, workflowId: `smoke:${input.runId}`, args: [input] });
        } catch (error) {
          if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
        }
      }),
    );
  };
}
