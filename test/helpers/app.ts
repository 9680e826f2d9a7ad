// The API app for route and ingress tests (app.request() with no server): test secrets, quiet logger, no readiness
// checks, and failure budgets of its own (A23: they live in the shared test database; two "replicas" pass one name).
import { randomUUID } from 'node:crypto';
import { createApp } from '../../src/api/app.js';
import type { ApiDeps } from '../../src/api/deps.js';
import { TEST_ADMIN_TOKEN, TEST_SECRETS_KEY } from './env.js';
import { testProfile } from './profile.js';
import { testLogger } from './temporal.js';

export const TEST_API_ENV = { ADMIN_TOKEN: TEST_ADMIN_TOKEN, SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY.toString('base64') };

export function testApp(deps: Pick<ApiDeps, 'db' | 'temporal' | 'taskQueues'> & Partial<ApiDeps>) {
  return createApp({
    profile: testProfile(),
    env: TEST_API_ENV,
    logger: testLogger,
    readiness: {},
    throttleNamespace: `test-${randomUUID()}:`,
    ...deps,
  });
}
