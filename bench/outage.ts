// npm run bench:outage (P12, issue 33) — runs bench/lib/outage-run.ts --runs times (default 3), each a fresh app
// process (batched dispatcher + delivery workers) with its load generator and merchants in a process of their own
// (bench/lib/outage-load.ts): a steady flow to 20 merchants of 5 endpoints, one merchant with 30 % of the events down
// (503, or --variant timeout) for a phase and back; then min / median / max of every figure, each process's CPU,
// event-loop delay and GC per phase (before, during, recovery, after), and the load average around each run.
// Usage: npm run bench:outage -- [--runs 3] [--rate 60] [--merchants 20] [--endpoints 5] [--share 0.3]
//        [--variant 503|timeout|none (the control: no outage)] [--control-recovery-seconds 60] [--before 20]
//        [--during 40] [--recovery-max-seconds 150] [--after 20] [--no-ramp] [--ramp-max 100 (per endpoint)]
//        [--circuit-open-after 5s] [--circuit-open-after-burst N (0: off, as before P16)] [--probe-every 5s]
//        [--schedule 5s,10s,20s,30s,…] [--node-flags '…'] [--down-merchant process|shared] [--keep-rows] [--timeline]
//        [--no-gc-warm] [--gc-warm-max-seconds 180]
import { runThreeTimes } from './lib/three-runs.js';

await runThreeTimes('bench:outage', new URL('./lib/outage-run.ts', import.meta.url));
