// P7: deliveries while an inbound backlog drains. bench:outbound -- --inbound-burst N measures a delivery burst and a
// steady delivery rate alone, then starts `bench/inbound-drain.ts` (a burst of N signed webhooks through the real
// ingress, starter, sweep and reconciliation worker) in a child process, as the API and worker processes would be,
// waits until its backlog is building, and measures the same delivery phases again while it drains. Prints both
// delivery rates, the ratio (goal ≥ 50 %), the steady p99 during the drain (goal < 5 s) and the drain's own figures.
import { spawn } from 'node:child_process';
import type { Client } from '@temporalio/client';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import pLimit from 'p-limit';
import type { DrainSample } from './inbound-drain.js';
import { percentile } from './stats.js';

/** What bench/lib/outbound-run.ts lends: produce merchant events, and the receiver's produce-to-receive latencies. */
export interface DeliveryHarness {
  /** Produces `count` events at once (batches of 500) to the merchant endpoint answering 200. */
  produce(count: number): Promise<void>;
  /** Resolves when `count` distinct events have been received since the last reset. */
  waitForReceived(count: number, timeoutMs: number): Promise<void>;
  /** Clears the received set and the latencies. */
  reset(): void;
  latencies: number[];
}

interface PhaseFigures {
  burstRate: number;
  burstP99: number;
  steadyP50: number;
  steadyP99: number;
}

async function deliveryPhases(harness: DeliveryHarness, count: number, rate: number, seconds: number): Promise<PhaseFigures> {
  harness.reset();
  const started = performance.now();
  await harness.produce(count);
  await harness.waitForReceived(count, 1_800_000);
  const burstRate = count / ((performance.now() - started) / 1000);
  const burstP99 = percentile(harness.latencies, 0.99);
  harness.reset();
  const total = Math.round(rate * seconds);
  const steadyStart = Date.now();
  for (let i = 0; i < total; i++) {
    const wait = steadyStart + (i * 1000) / rate - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    await harness.produce(1);
  }
  await harness.waitForReceived(total, 600_000);
  return { burstRate, burstP99, steadyP50: percentile(harness.latencies, 0.5), steadyP99: percentile(harness.latencies, 0.99) };
}

export interface CompetitionOptions {
  webhooks: number;
  count: number;
  rate: number;
  seconds: number;
  /** inbound.reconciliation_start_rate for the drain (default: the profile's). */
  startRate?: number;
  /** Ends the drain's leftover workflows once the delivery phases are measured (the drain is cut short there). */
  temporal: Client;
  /** When the delivery phases begin: once every webhook was acknowledged (default) or a quarter of them. */
  from?: 'acked' | 'quarter';
}

export async function measureAgainstInboundDrain(harness: DeliveryHarness, options: CompetitionOptions): Promise<string[]> {
  const solo = await deliveryPhases(harness, options.count, options.rate, options.seconds);

  const script = fileURLToPath(new URL('../inbound-drain.ts', import.meta.url));
  const extra = options.startRate === undefined ? [] : ['--start-rate', String(options.startRate)];
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', script, '--webhooks', String(options.webhooks), '--baseline', '0', '--json-samples', ...extra],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let latest: DrainSample = { t: 0, acked: 0, started: 0, posted: 0 };
  let taskQueue = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line.startsWith('sample ')) latest = JSON.parse(line.slice(7)) as DrainSample;
    else if (line.startsWith('queue ')) taskQueue = line.slice(6);
  });
  // `acked` (default): the issue's scenario, the whole burst acknowledged and its backlog draining; `quarter`: a
  // quarter acknowledged, so the ingress is still acking (signing checks and receipt commits on the same cores).
  const from = options.from ?? 'acked';
  const deadline = Date.now() + 600_000;
  while (!((from === 'acked' ? latest.acked >= options.webhooks : latest.acked >= options.webhooks / 4) && latest.started > 0)) {
    if (Date.now() > deadline)
      throw new Error(`the inbound drain did not build a backlog within 10 minutes (${JSON.stringify(latest)})`);
    if (child.exitCode !== null) throw new Error(`bench/inbound-drain.ts exited with ${child.exitCode} before its backlog built`);
    await new Promise((r) => setTimeout(r, 500));
  }
  const before = latest;
  const during = await deliveryPhases(harness, options.count, options.rate, options.seconds);
  const after = latest;
  // Cut the drain short: the child stops, and its reconciliations still open are terminated (nobody polls their queue).
  child.kill('SIGKILL');
  await exited;
  if (taskQueue) {
    // One by one: the dev server runs one batch operation at a time, and other benches may hold it.
    const limit = pLimit(16);
    const open: Promise<unknown>[] = [];
    for await (const run of options.temporal.workflow.list({
      query: `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`,
    })) {
      open.push(
        limit(() =>
          options.temporal.workflow
            .getHandle(run.workflowId)
            .terminate('bench:outbound --inbound-burst cleanup')
            .catch(() => undefined),
        ),
      );
    }
    await Promise.all(open);
  }
  const drainRate = (after.posted - before.posted) / Math.max(0.001, after.t - before.t);

  const ratio = (during.burstRate / solo.burstRate) * 100;
  const overlapped = after.posted < after.acked || after.acked < options.webhooks;
  const acked = `${after.acked} acknowledged, ${after.started} started, ${after.posted} posted when the delivery phases ended`;
  return [
    `inbound   ${options.webhooks} signed webhooks drained by a child process (ingress + starter + sweep + reconciliation worker${options.startRate === undefined ? '' : `, start rate ${options.startRate}/s`}); ` +
      `backlog (acked − posted) ${before.acked - before.posted} when the delivery phases began (${from === 'acked' ? 'all acknowledged' : 'a quarter acknowledged, the ingress still acking'}), ${after.acked - after.posted} when they ended` +
      (overlapped ? '' : ' — the drain finished before the deliveries did: use a larger --inbound-burst'),
    `solo      burst ${options.count}: ${solo.burstRate.toFixed(1)} deliveries/s (p99 ${solo.burstP99} ms); steady ${options.rate}/s for ${options.seconds} s: p50 ${solo.steadyP50} ms, p99 ${solo.steadyP99} ms`,
    `drain     burst ${options.count}: ${during.burstRate.toFixed(1)} deliveries/s (p99 ${during.burstP99} ms); steady ${options.rate}/s for ${options.seconds} s: p50 ${during.steadyP50} ms, p99 ${during.steadyP99} ms`,
    `ratio     deliveries/s during the drain ÷ solo = ${ratio.toFixed(0)} % (goal ≥ 50 %); steady p99 during the drain ${during.steadyP99} ms (goal < 5000 ms)`,
    `inbound   ${acked}; ${drainRate.toFixed(1)} reconciliations/s posted during the delivery phases (the drain is then cut short)`,
  ];
}
