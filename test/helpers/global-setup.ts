// Once per integration run: migrate the test database, bundle the workflows (each worker reuses the bundle), and
// note the run's start for the after-file transition-path check (test/helpers/setup-runtime.ts). Every project that
// uses the stack lists this file; the bundle is built by the first of them in a run and reused by the others (P11).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { TestProject } from 'vitest/node';
import { runMigrations } from '../../src/db/migrate.js';
import { bundleWorkflows } from '../../src/temporal-workers/build.js';
import { TEST_DATABASE_URL, WORKFLOW_BUNDLE_PATH } from './env.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** R14: the start of this run; the after-file path check reads the reconciliations touched since. */
    testRunStartedAt: string;
  }
}

/** Which vitest run built the bundle: the main process's pid and start, the same for every project of one run. */
const RUN_MARK = `${process.pid}@${Math.round(Date.now() / 1000 - process.uptime())}`;
const MARK_PATH = `${WORKFLOW_BUNDLE_PATH}.run`;

export default async function setup(project: TestProject): Promise<void> {
  project.provide('testRunStartedAt', new Date(Date.now() - 1000).toISOString());
  await runMigrations(TEST_DATABASE_URL);
  if (existsSync(WORKFLOW_BUNDLE_PATH) && existsSync(MARK_PATH) && readFileSync(MARK_PATH, 'utf8') === RUN_MARK) return;
  // R18: the processes' bundle (the OpenTelemetry workflow interceptor included), so the replay tests replay it.
  const code = await bundleWorkflows();
  mkdirSync(dirname(WORKFLOW_BUNDLE_PATH), { recursive: true });
  writeFileSync(WORKFLOW_BUNDLE_PATH, code);
  writeFileSync(MARK_PATH, RUN_MARK);
}
