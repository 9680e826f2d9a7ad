// `npm run drill:cluster -- --seed S [--seeds a,b,c] [--webhook-rate 2] [--event-rate 2] [--offset 0] [--keep]`
// (issue 34, R22): the cluster drill of bench/cluster/drill.ts on scripts/cluster.sh's cluster, one run per seed;
// exit 1 if an invariant failed in any. Figures go to docs/reliability.md by hand, with the machine's load.
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { runDrill } from './cluster/drill.js';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    seeds: { type: 'string' },
    'webhook-rate': { type: 'string', default: '2' },
    'event-rate': { type: 'string', default: '2' },
    'warmup-seconds': { type: 'string', default: '40' },
    'settle-minutes': { type: 'string', default: '5' },
    offset: { type: 'string', default: '0' },
    keep: { type: 'boolean', default: false },
  },
});
const seeds = (values.seeds ?? values.seed ?? '1').split(',').map(Number);
const say = (line: string) => console.log(`[cluster-drill] ${line}`);
const results: string[] = [];
for (const seed of seeds) {
  say(
    `load average before: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} (2 cores, shared with other work)`,
  );
  const result = await runDrill({
    seed,
    offset: Number(values.offset),
    webhookRate: Number(values['webhook-rate']),
    eventRate: Number(values['event-rate']),
    warmupS: Number(values['warmup-seconds']),
    settleMinutes: Number(values['settle-minutes']),
    keep: values.keep,
    say,
  }).catch((error: Error) => (say(`FAILED (seed ${seed}): ${error.stack ?? error}`), { ok: false }));
  say(
    `load average after: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  results.push(`${seed} ${result.ok ? 'passed' : 'FAILED'}`);
}
say(`seeds: ${results.join(', ')}`);
process.exit(results.every((r) => r.endsWith('passed')) ? 0 : 1);
