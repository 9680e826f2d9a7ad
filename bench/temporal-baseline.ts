// npm run bench:temporal — prints the bare one-activity workflow rate of the local dev server.
// Usage: npm run bench:temporal -- [count=500] [concurrency=32]
import { measureBaselineRate } from './lib/baseline.js';

const count = Number(process.argv[2] ?? 500);
const concurrency = Number(process.argv[3] ?? 32);
const result = await measureBaselineRate({ count, concurrency });
console.log(
  `bench:temporal  ${result.count} one-activity workflows, concurrency ${result.concurrency}: ` +
    `${result.seconds.toFixed(2)} s, ${result.workflowsPerSecond.toFixed(1)} workflows/s`,
);
