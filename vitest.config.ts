// Two projects: unit (no servers) and integration (the real PostgreSQL, Temporal and Kafka of scripts/stack.sh).
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
    ],
  },
});
