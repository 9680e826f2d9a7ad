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
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { loadAverage, report, type RunResult } from './lib/runs.js';

const argv = process.argv.slice(2);
const at = argv.indexOf('--runs');
const RUNS = at >= 0 ? Number(argv[at + 1]) : 3;
if (!(RUNS >= 1)) {
  console.error(`bench:outbound: --runs must be a positive number (got ${argv[at + 1]})`);
  process.exit(2);
}
let passed = at >= 0 ? [...argv.slice(0, at), ...argv.slice(at + 2)] : argv;
// --node-flags '…': V8/Node flags of the app process only (e.g. --max-semi-space-size=64), to measure a GC setting.
const flagsAt = passed.indexOf('--node-flags');
const NODE_FLAGS = flagsAt >= 0 ? passed[flagsAt + 1]!.split(' ').filter(Boolean) : [];
if (flagsAt >= 0) passed = [...passed.slice(0, flagsAt), ...passed.slice(flagsAt + 2)];

const runs: RunResult[] = [];
for (let i = 1; i <= RUNS; i++) {
  console.log(`run ${i}/${RUNS} — load average ${loadAverage()}`);
  const child = spawn(process.execPath, [...NODE_FLAGS, '--import', 'tsx', fileURLToPath(new URL('./lib/outbound-run.ts', import.meta.url)), ...passed, '--run-index', String(i)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, KAFKAJS_NO_PARTITIONER_WARNING: '1' },
  });
  let result: RunResult | undefined;
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line.startsWith('RESULT ')) result = JSON.parse(line.slice(7)) as RunResult;
    else console.log(line);
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0 || !result) {
    console.error(`run ${i} failed (exit ${code}); its figures are left out`);
    continue;
  }
  runs.push(result);
}
console.log(report(`bench:outbound ${passed.join(' ')}`, runs));
process.exit(runs.length === RUNS ? 0 : 1);
