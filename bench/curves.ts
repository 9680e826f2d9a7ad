// npm run bench:curves (issue 33 items 3 and 4, P14, P10) — runs bench/lib/curves-run.ts --runs times (default 3),
// each a fresh process, and prints each run's lines, then min / median / max of every figure and the load average
// before and after each run (bench/lib/three-runs.ts). Per scenario: deliveries/s, its share of the raw POST budget
// measured in the same run, peak RSS and CPU per delivery of each process, PostgreSQL bytes per delivery.
// Usage: npm run bench:curves -- [--runs 3] [--sizes 20000,200000,1000000] [--fanout 1,100,1000]
//        [--fanout-deliveries 20000] [--merchants 1,100,1000,10000] [--merchant-events 20000] [--budget-seconds 5]
//        [--warmup 20000] (an unmeasured burst first)
//        [--outbound '{"batched":{"pipeline_depth":2048}}'] (outbound profile keys changed for the run)
//        (an empty list skips its scenario, e.g. --fanout '' --merchants '')
import { runThreeTimes } from './lib/three-runs.js';

await runThreeTimes('bench:curves', new URL('./lib/curves-run.ts', import.meta.url));
