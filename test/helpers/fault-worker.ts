// R13: a worker process that kills itself at the dangerous instant of one workflow step (APIPAY_FAULT_AFTER_STEP,
// src/activities/step-fault.ts), for test/integration/step-faults.test.ts. argv[2] is JSON
// { taskQueues, providerBaseUrl, fault, inbound? }: the production worker setup on the dev server and the test database,
// with the test profile pointing the provider at the test's sandbox. Prints "ready"; dies with SIGKILL at the fault.
import { NativeConnection } from '@temporalio/worker';
import { createActivities } from '../../src/activities/index.js';
import { createDatabase } from '../../src/db/client.js';
import type { TaskQueues } from '../../src/shared/task-queues.js';
import { TEMPORAL_ADDRESS, TEST_DATABASE_URL, TEST_SECRETS_KEY } from './env.js';
import { faultProfile } from './fault-world.js';
import { startWorkers, testLogger } from './temporal.js';

const config = JSON.parse(process.argv[2]!) as { taskQueues: TaskQueues; providerBaseUrl: string; fault: string };
const database = createDatabase(TEST_DATABASE_URL, { max: 4 });
const connection = await NativeConnection.connect({ address: TEMPORAL_ADDRESS });
const activities = createActivities({
  db: database.db,
  profile: faultProfile(config.providerBaseUrl),
  logger: testLogger,
  secretsKey: TEST_SECRETS_KEY,
  faultAfterStep: config.fault,
});
await startWorkers({ connection, taskQueues: config.taskQueues, activities });
console.log('ready');
