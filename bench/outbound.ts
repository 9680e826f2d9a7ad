// npm run bench:outbound (P2, P8–P10) — runs bench/lib/outbound-run.ts --runs times (default 3), each a fresh app
// process (dispatcher + delivery worker) with its load generator in a process of its own (bench/lib/outbound-load.ts),
// and prints each run's lines, then min / median / max of every figure, each process's event-loop delay and GC per
// phase, and the load average before and after each run (bench/lib/runs.ts). A goal counts as met on the median.
// Usage: npm run bench:outbound -- [--runs 3] [--count 2000] [--rate 20[,1000…]] [--steady-seconds 15] [--baseline 500]
//        [--node-flags '--max-semi-space-size=64'] [--no-unpipelined] [--pipeline-sends N] [--compare-sends N] [--compare-outbound '{"coalesce_batches":1}' [--compare-burst]] [--first-attempt local|activity] [--no-eager] [--start-concurrency 32] [--parked 10000]
//        [--max-cached 500] [--worker-process] [--slow-endpoints K] [--throttle R [--throttle-count 1000]]
//        [--mode per_delivery|batched] [--compare-count 2000] [--merchant-delay-ms D]
//        [--inbound-burst N [--inbound-start-rate R] [--inbound-from acked|quarter]]
//        (the scenarios: bench/lib/endpoint-scenarios.ts, bench/lib/inbound-competition.ts)
import { runThreeTimes } from './lib/three-runs.js';

await runThreeTimes('bench:outbound', new URL('./lib/outbound-run.ts', import.meta.url));
