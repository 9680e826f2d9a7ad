// A separate process running the outbox relay (M1) against the test database and the real Kafka, for the crash
// test: argv[2] is JSON { topic, accounts: { provider: merchantAccount }, pauseForProvider? }. Prints "ready"; with
// pauseForProvider, once Kafka has acknowledged a batch holding a row of that provider and before the rows are
// marked, it prints "paused-after-ack" and waits there forever, so the test can SIGKILL it inside that window.
import { createDatabase } from '../../src/db/client.js';
import { createProducer } from '../../src/kafka/kafkajs.js';
import { startOutboxRelay } from '../../src/outbox/relay.js';
import { KAFKA_BROKERS, TEST_DATABASE_URL } from './env.js';
import { testLogger } from './temporal.js';

const config = JSON.parse(process.argv[2]!) as { topic: string; accounts: Record<string, string>; pauseForProvider?: string };
const database = createDatabase(TEST_DATABASE_URL, { max: 2 });
const relay = startOutboxRelay({
  db: database.db,
  logger: testLogger,
  connect: () => createProducer({ brokers: KAFKA_BROKERS, clientId: `relay-test-${process.pid}` }),
  topic: config.topic,
  accountOf: (provider) => ({ merchantAccount: config.accounts[provider] ?? provider, livemode: false }),
  scope: { providers: Object.keys(config.accounts) }, // other test files' rows are not ours to publish
  idleMs: 50,
  afterPublish: async (rows) => {
    if (!config.pauseForProvider || !rows.some((r) => r.provider === config.pauseForProvider)) return;
    console.log('paused-after-ack');
    await new Promise(() => {});
  },
});
console.log('ready');

process.once('SIGTERM', async () => {
  await relay.stop().catch(() => {});
  await database.close();
  process.exit(0);
});
