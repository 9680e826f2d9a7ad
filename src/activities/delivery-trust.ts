// R20: a delivery's first step. The workflow is started with a delivery id and an attempt count; before any POST this
// read-only step checks them against PostgreSQL: the delivery row exists, the workflow id is the one the delivery
// derives (so no second workflow attempts the same delivery under another id), and the attempt count does not run
// past the attempts recorded (an invented count would reserve attempt numbers the store never scheduled and POST again).
import type { Db } from '../db/client.js';
import { createDeliveryStore } from '../outbound/delivery-store.js';
import { deliveryWorkflowId } from '../shared/ids.js';
import type { DeliveryStatus } from '../shared/outbound.js';

export type DeliveryStartCheck =
  { outcome: 'trusted'; status: DeliveryStatus; attemptCount: number } | { outcome: 'refused'; reason: string };

export function createDeliveryTrustActivities(deps: { db: Db }) {
  const rows = createDeliveryStore(deps.db);
  return {
    async checkDeliveryStart(request: {
      workflowId: string;
      deliveryId: unknown;
      priorAttempts?: unknown;
    }): Promise<DeliveryStartCheck> {
      const { deliveryId, priorAttempts } = request;
      if (typeof deliveryId !== 'string' || deliveryId.length === 0)
        return { outcome: 'refused', reason: 'the start input names no delivery id' };
      if (request.workflowId !== deliveryWorkflowId(deliveryId))
        return {
          outcome: 'refused',
          reason: `delivery ${deliveryId} runs under workflow id ${deliveryWorkflowId(deliveryId)}, not ${request.workflowId}`,
        };
      const state = await rows.state(deliveryId);
      if (!state)
        return {
          outcome: 'refused',
          reason: `no delivery ${deliveryId}: only the dispatcher and an operator's retry start deliveries`,
        };
      if (
        priorAttempts !== undefined &&
        (!Number.isSafeInteger(priorAttempts) || (priorAttempts as number) < 0 || (priorAttempts as number) > state.attemptCount)
      )
        return {
          outcome: 'refused',
          reason: `priorAttempts ${JSON.stringify(priorAttempts)} is not the ${state.attemptCount} attempt(s) recorded for ${deliveryId}`,
        };
      return { outcome: 'trusted', status: state.status, attemptCount: state.attemptCount };
    },
  };
}
