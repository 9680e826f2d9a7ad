// R12: workflow histories as JSON fixtures. The SDK's historyToJSON/historyFromJSON fail in this install (two
// copies of protobufjs 8 under @temporalio/common and @temporalio/proto: "type must be a Type"), so histories are
// converted with the History message's own toObject/fromObject: camelCase fields, enum names, 64-bit integers
// as strings and payload bytes in base64, close to the JSON that `temporal workflow show --output json` writes.
import { readdirSync, readFileSync } from 'node:fs';
import type { History } from '@temporalio/common/lib/proto-utils.js';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { WORKFLOW_BUNDLE_PATH } from './env.js';

const HistoryMessage = proto.temporal.api.history.v1.History;

export const HISTORIES_DIR = new URL('../fixtures/histories/', import.meta.url);

export interface HistoryFixture {
  /** The workflow path this history shows, e.g. delivery-retried-then-delivered. */
  path: string;
  /** Replays need it: the reconciliation workflow uses its id. */
  workflowId: string;
  history: Record<string, unknown>;
}

export function historyToObject(history: History): Record<string, unknown> {
  return HistoryMessage.toObject(HistoryMessage.fromObject(history), { longs: String, enums: String, bytes: String }) as Record<string, unknown>;
}

export function historyFromObject(object: Record<string, unknown>): History {
  return HistoryMessage.fromObject(object) as History;
}

/** The JSON fixtures of one folder (default: the current recordings; pre-merge/… keeps older ones). */
export function loadHistoryFixtures(dir: URL = HISTORIES_DIR): (HistoryFixture & { file: string })[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => ({ file, ...(JSON.parse(readFileSync(new URL(file, dir), 'utf8')) as HistoryFixture) }));
}

/** Replays a fixture with today's workflow bundle: resolves when the workflows still take the recorded path (R12). */
export const replayFixture = (fixture: Pick<HistoryFixture, 'history' | 'workflowId'>) =>
  Worker.runReplayHistory({ workflowBundle: { codePath: WORKFLOW_BUNDLE_PATH } }, historyFromObject(fixture.history), fixture.workflowId);
