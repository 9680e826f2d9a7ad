// Four projects: unit (no servers), integration (the real PostgreSQL, Temporal and Kafka of scripts/stack.sh),
// browser (the console in Chromium, C3) and fuzz (property tests over every external input, on the same stack).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          // Temporal's native bridge wants real processes, not worker threads.
          pool: 'forks',
          globalSetup: ['test/helpers/global-setup.ts'],
          setupFiles: ['test/helpers/setup-runtime.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        // C3: the console and the portal in a real Chromium (playwright-core, the system's /usr/bin/chromium).
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          environment: 'node',
          pool: 'forks',
          globalSetup: ['test/helpers/global-setup.ts'],
          setupFiles: ['test/helpers/setup-runtime.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
      {
        // R10 property tests (fixed seed, bounded runs; `npm run fuzz` for long runs) on the same real stack.
        test: {
          name: 'fuzz',
          include: ['test/fuzz/**/*.test.ts'],
          environment: 'node',
          pool: 'forks',
          globalSetup: ['test/helpers/global-setup.ts'],
          setupFiles: ['test/helpers/setup-runtime.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
