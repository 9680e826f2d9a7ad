// Command line of `npm run soak -- --minutes M --seed S [...]` (R11), or `--seeds a,b,c`: one run per seed in turn (R16).
import { parseArgs } from 'node:util';

export interface SoakArgs {
  minutes: number;
  /** The first (or only) seed. */
  seed: number;
  /** Every seed to run, in order (`--seeds a,b,c`, or the one `--seed`). */
  seeds: number[];
  /** Inbound webhooks and outbound events produced per second. */
  webhookRate: number;
  eventRate: number;
  /** Longest wait after traffic stops for every workflow to settle. */
  settleMinutes: number;
  /** Port base: PostgreSQL base+1, Temporal base+2 (UI base+3), Kafka base+4 (controller base+5), API base+6, … */
  portBase: number;
  /** Traffic left out (named in the report), to check a branch without that fix: R1 (U+0000 poison envelopes). */
  skip: Set<string>;
  keep: boolean;
  /** M11: run the soak's own RabbitMQ and its queue endpoint (`--no-broker` leaves them out). */
  broker: boolean;
  /** P1: the dispatcher in batched mode (`--batched`): its first attempts, P20's start delays and P21 under the kills. */
  batched: boolean;
}

export const SKIPPABLE: Record<string, string> = {
  R1: 'poison envelopes with U+0000 in merchant_account (R1)',
};

export function parseSoakArgs(argv: string[]): SoakArgs {
  const { values } = parseArgs({
    args: argv,
    options: {
      minutes: { type: 'string', default: '10' },
      seed: { type: 'string' },
      seeds: { type: 'string', multiple: true },
      'webhook-rate': { type: 'string', default: '2' },
      'event-rate': { type: 'string', default: '1' },
      'settle-minutes': { type: 'string', default: '4' },
      'port-base': { type: 'string', default: '25400' },
      skip: { type: 'string', multiple: true, default: [] },
      keep: { type: 'boolean', default: false },
      'no-broker': { type: 'boolean', default: false },
      batched: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const number = (name: string, value: string, min: number) => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number ≥ ${min}, got ${JSON.stringify(value)}`);
    return n;
  };
  const skip = new Set(values.skip.flatMap((s) => s.split(',')).filter(Boolean));
  for (const s of skip) if (!(s in SKIPPABLE)) throw new Error(`--skip ${s}: known: ${Object.keys(SKIPPABLE).join(', ')}`);
  if (values.seed !== undefined && values.seeds !== undefined) throw new Error('--seed and --seeds: give one of them');
  const seedList = values.seeds ? values.seeds.flatMap((s) => s.split(',')).map((s) => s.trim()) : [values.seed ?? '1'];
  const seeds = seedList.map((s) => {
    if (!/^\d+$/.test(s))
      throw new Error(`--${values.seeds ? 'seeds' : 'seed'}: a seed is a whole number ≥ 0, got ${JSON.stringify(s)}`);
    return Number(s);
  });
  if (seeds.length === 0) throw new Error('--seeds: no seed given');
  return {
    minutes: number('minutes', values.minutes, 0.5),
    seed: seeds[0]!,
    seeds,
    webhookRate: number('webhook-rate', values['webhook-rate'], 0.1),
    eventRate: number('event-rate', values['event-rate'], 0.1),
    settleMinutes: number('settle-minutes', values['settle-minutes'], 0.5),
    portBase: Math.floor(number('port-base', values['port-base'], 1024)),
    skip,
    keep: values.keep,
    broker: !values['no-broker'],
    batched: values.batched,
  };
}
