// Once per integration run: migrate the test database and bundle the workflows (each worker reuses the bundle).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { runMigrations } from '../../src/db/migrate.js';
import { WORKFLOWS_PATH } from '../../src/temporal-workers/build.js';
import { TEST_DATABASE_URL, WORKFLOW_BUNDLE_PATH } from './env.js';

export default async function setup(): Promise<void> {
  await runMigrations(TEST_DATABASE_URL);
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } as never });
  mkdirSync(dirname(WORKFLOW_BUNDLE_PATH), { recursive: true });
  writeFileSync(WORKFLOW_BUNDLE_PATH, code);
}
