// npm run bench:sleeping (issue 33 item 2, P13) — runs bench/lib/sleeping-run.ts --runs times (default 3): the cost of
// --count retrying deliveries asleep in one durable timer each (bytes in Temporal's store and PostgreSQL per delivery,
// worker memory, the time for their timers to fire together and be handled) beside as many parked ones (P13).
// Usage: npm run bench:sleeping -- [--runs 3] [--count 10000] [--start-concurrency 32] [--asleep-per-second 20]
//        [--fire-cap-minutes 30] [--parked-only (the parked side alone)]
//        [--parked-during-fire (the parked side released from the same T as the retrying side's fire, P18)] [--keep-rows]
import { runThreeTimes } from './lib/three-runs.js';

await runThreeTimes('bench:sleeping', new URL('./lib/sleeping-run.ts', import.meta.url));
