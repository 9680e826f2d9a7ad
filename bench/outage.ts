// npm run bench:outage (P12, issue 33) — runs bench/lib/outage-run.ts --runs times (default 3), each a fresh app
// process (batched dispatcher + delivery workers) with its load generator and merchants in a process of their own
// (bench/lib/outage-load.ts): a steady flow to 20 merchants of 5 endpoints, one merchant with 30 % of the events down
// (503, or --variant timeout) for a phase and back; then min / median / max of every figure, each process's CPU,
// event-loop delay and GC per phase (before, during, recovery, after), and the load average around each run.
// Usage: npm run bench:outage -- [--runs 3] [--rate 60] [--merchants 20] [--endpoints 5] [--share 0.3]
//        [--variant 503|timeout] [--before 20] [--during 40] [--recovery-max-seconds 150] [--after 20] [--no-ramp]
//        [--schedule 5s,10s,20s,30s,…] [--node-flags '…']
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { loadAverage, report, type RunResult } from './lib/runs.js';

const argv = process.argv.slice(2);
const at = argv.indexOf('--runs');
const RUNS = at >= 0 ? Number(argv[at + 1]) : 3;
if (!(RUNS >= 1)) {
  console.error(`bench:outage: --runs must be a positive number (got ${argv[at + 1]})`);
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
  const child = spawn(
    process.execPath,
    [
      ...NODE_FLAGS,
      '--import',
      'tsx',
      fileURLToPath(new URL('./lib/outage-run.ts', import.meta.url)),
      ...passed,
      '--run-index',
      String(i),
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, KAFKAJS_NO_PARTITIONER_WARNING: '1' },
    },
  );
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
console.log(report(`bench:outage ${passed.join(' ')}`, runs));
process.exit(runs.length === RUNS ? 0 : 1);
