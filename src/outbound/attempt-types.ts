// O7, R3, O13, O18, P12: the shapes of a delivery attempt: its input, its target, the reservation an attempt number
// finds, and the outcome applied to the delivery and its endpoint. Types only (and the in-flight marker), shared by
// the attempt store (./attempt-store.ts), the outcome writes (./attempt-apply.ts) and the delivery activity.
import type { Db } from '../db/client.js';
import type { Logger } from '../lib/logger.js';
import type { DeliveryStatus, EndpointStatus } from '../shared/outbound.js';
import type { AttemptOutcome } from './attempt-record.js';
import type { RecoverySettings } from './recovery.js';

/** Marks an attempt row reserved before its POST and not yet finished. */
export const IN_FLIGHT = 'in_flight';

export interface AttemptInput {
  deliveryId: string;
  attemptNumber: number;
  /** Workflow time (ms) when the attempt was scheduled: base of next_attempt_at and of the O13 streak. */
  scheduledAt: number;
  /** The wait before the next retry, or null when this is the cycle's last attempt. */
  retryInMs: number | null;
  /** M2: set when the workflow runs this attempt in the slow lane (never diverted again). */
  lane?: 'slow';
  /** M5: the throttle slot (epoch ms) this attempt already reserved and waited for. */
  slotAt?: number;
  /**
   * P15: a scheduled retry (not an operator's, not one the probe released) is parked instead of sent while its endpoint
   * parks (src/outbound/circuit.ts `parks`). Set only by workflows past the DELIVERY_PARKS patch.
   */
  mayPark?: boolean;
}

/** What an attempt sends, and where. */
export interface AttemptTarget {
  eventBody: Buffer;
  endpointId: string;
  url: string;
  endpointStatus: EndpointStatus;
  /** M3: the delivery's place in its ordered endpoint's line; null when unordered. */
  sequence: number | null;
  /** M5. */
  rateLimitPerSecond: number | null;
  /** M2. */
  consecutiveFailures: number;
  /** P15: the delivery is parked (a retry its circuit parked, now sent by an operator's retry or the probe's release). */
  parked: boolean;
}

export type Reservation =
  | { kind: 'reserved'; attemptId: number }
  /**
   * An earlier execution reserved this number at `startedAt` and may be POSTing it still, or may have POSTed before it
   * stopped: never POST it again (R3: wait for it while its lease lasts, see awaitInFlight).
   */
  | { kind: 'in_flight'; attemptId: number; startedAt: Date }
  /** An earlier execution finished it: its recorded outcome is applied again (the status update may be what failed). */
  | { kind: 'finished'; attemptId: number; recorded: AttemptOutcome };

/** The recorded outcome and what it did to the delivery and its endpoint. */
export interface Applied {
  recorded: AttemptOutcome;
  status: DeliveryStatus;
  /** This attempt disabled the endpoint (O13). */
  disabledNow: boolean;
  /** The endpoint is disabled (already, or by this attempt): the rest of the schedule would not be sent. */
  stopRetrying: boolean;
  /** O18: the wait before the next attempt when Retry-After made it longer than the schedule's. */
  retryInMs?: number;
}

export interface AttemptStoreDeps {
  db: Db;
  logger: Logger;
  /** Profile outbound.auto_disable_after (O13). */
  autoDisableAfterMs: number;
  /** O18: the schedule's last wait, the most a Retry-After can delay an attempt; default no longer than the schedule. */
  lastRetryWaitMs?: number;
  /** P12: profile outbound.recovery (retry jitter, recovery ramp); absent: neither. */
  recovery?: RecoverySettings;
}
