// Per test file: Temporal's worker runtime logs at WARN so test output shows what the tests print.
import { DefaultLogger, Runtime } from '@temporalio/worker';

try {
  Runtime.install({ logger: new DefaultLogger((process.env.TEMPORAL_LOG_LEVEL as 'WARN') ?? 'WARN') });
} catch {
  // Already installed in this process by an earlier file.
}
