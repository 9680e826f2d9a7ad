// The driver of the benchmarks that run a script --runs times (default 3), each a fresh process (bench:outbound,
// bench:outage): the load average printed before each run, the run's lines passed through, its RESULT line kept,
// then min / median / max of every figure (runs.ts). `--node-flags '…'` are V8/Node flags of the run's process
// only (e.g. --max-semi-space-size=64), to measure a GC setting. Exit 1 when a run failed (its figures left out).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { loadAverage, report, type RunResult } from './runs.js';

export async function runThreeTimes(name: string, script: URL, argv = process.argv.slice(2)): Promise<never> {
  const at = argv.indexOf('--runs');
  const RUNS = at >= 0 ? Number(argv[at + 1]) : 3;
  if (!(RUNS >= 1)) {
    console.error(`${name}: --runs must be a positive number (got ${argv[at + 1]})`);
    process.exit(2);
  }
  let passed = at >= 0 ? [...argv.slice(0, at), ...argv.slice(at + 2)] : argv;
  const flagsAt = passed.indexOf('--node-flags');
  const NODE_FLAGS = flagsAt >= 0 ? passed[flagsAt + 1]!.split(' ').filter(Boolean) : [];
  if (flagsAt >= 0) passed = [...passed.slice(0, flagsAt), ...passed.slice(flagsAt + 2)];

  const runs: RunResult[] = [];
  for (let i = 1; i <= RUNS; i++) {
    console.log(`run ${i}/${RUNS} — load average ${loadAverage()}`);
    const child = spawn(
      process.execPath,
      [...NODE_FLAGS, '--import', 'tsx', fileURLToPath(script), ...passed, '--run-index', String(i)],
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
  console.log(report(`${name} ${passed.join(' ')}`, runs));
  process.exit(runs.length === RUNS ? 0 : 1);
}
