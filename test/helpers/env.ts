// Settings every integration test shares: the test database and the local stack's addresses.
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5433/apipay_test';
export const TEMPORAL_ADDRESS = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
export const KAFKA_BROKERS = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
export const TEST_SERVER_PATH =
  process.env.TEMPORAL_TEST_SERVER ?? `${process.env.APIPAY_CACHE ?? `${process.env.HOME}/.cache/apipay`}/bin/temporal-test-server`;
export const WORKFLOW_BUNDLE_PATH = new URL('../../.data/test/workflow-bundle.js', import.meta.url).pathname;
export const TEST_SECRETS_KEY = Buffer.alloc(32, 7);
export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789';
/** A6: the same test database as the application role (created by scripts/stack.sh and src/db/migrate.ts). */
export const TEST_APP_DATABASE_URL = (() => {
  const url = new URL(TEST_DATABASE_URL);
  url.username = process.env.DATABASE_APP_ROLE ?? 'apipay_app';
  url.password = '';
  return url.toString();
})();
/** R14: reconciliation ids test/integration/transition-path-audit.test.ts breaks on purpose (the after-file check skips them). */
export const PATH_FIXTURE_PREFIX = 'reconcile:tpath-';
