// P8: a benchmark's phases run several times (`--runs 3` by default) and reported as min / median / max of each
// figure, with each process's event-loop delay and GC per phase and the load average before and after every run;
// a goal counts as met when the median meets it (P9/P10). One run yields a RunResult; `report` prints them all.
import { loadavg } from 'node:os';
import { describeProcessStats, type ProcessStats } from './process-stats.js';

export interface Goal {
  op: '<=' | '>=' | '==';
  value: number;
  /** The requirement id it belongs to (P2, P4, P9, P10…). */
  id: string;
}

export interface Figure {
  name: string;
  value: number;
  unit: string;
  goal?: Goal;
}

export interface PhaseStats {
  phase: string;
  processes: ProcessStats[];
}

export interface RunResult {
  figures: Figure[];
  phases: PhaseStats[];
  loadBefore: string;
  loadAfter: string;
}

export const loadAverage = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ');

export function median(values: number[]): number {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (!sorted.length) return Number.NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export const meets = (goal: Goal, value: number) =>
  goal.op === '<=' ? value <= goal.value : goal.op === '>=' ? value >= goal.value : value === goal.value;

const fmt = (n: number) => (Number.isNaN(n) ? '–' : Math.abs(n) >= 100 ? n.toFixed(0) : n.toFixed(1));

/** Markdown: the figures' min / median / max / each run and the goal on the median; the processes per phase; the loads. */
export function report(title: string, runs: RunResult[]): string {
  const lines = [`\n## ${title}: ${runs.length} run(s)`, ''];
  lines.push('| run | load before (1/5/15 min) | load after |', '|---:|---|---|');
  runs.forEach((r, i) => lines.push(`| ${i + 1} | ${r.loadBefore} | ${r.loadAfter} |`));
  lines.push('', '| figure | min | median | max | runs | goal (on the median) |', '|---|---:|---:|---:|---|---|');
  const names = [...new Set(runs.flatMap((r) => r.figures.map((f) => f.name)))];
  for (const name of names) {
    const found = runs.map((r) => r.figures.find((f) => f.name === name));
    const values = found.map((f) => f?.value ?? Number.NaN);
    const sample = found.find((f) => f)!;
    const m = median(values);
    const present = values.filter((v) => !Number.isNaN(v));
    const goal = sample.goal
      ? `${sample.goal.id} ${sample.goal.op} ${sample.goal.value}: **${meets(sample.goal, m) ? 'met' : 'NOT met'}**`
      : '';
    lines.push(
      `| ${name} (${sample.unit}) | ${fmt(Math.min(...present))} | ${fmt(m)} | ${fmt(Math.max(...present))} | ${values.map(fmt).join(', ')} | ${goal} |`,
    );
  }
  lines.push('', 'Processes per phase (median of the runs; loop max and GC longest: the largest of the runs):', '');
  lines.push(
    '| phase | process | loop p99 ms | loop max ms | GC pauses | GC total ms | GC longest ms | GC major ms | CPU ms | CPU main / Temporal core / other threads ms |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  const phases = [...new Set(runs.flatMap((r) => r.phases.map((p) => p.phase)))];
  for (const phase of phases) {
    const all = runs.flatMap((r) => r.phases.filter((p) => p.phase === phase).flatMap((p) => p.processes));
    for (const name of [...new Set(all.map((s) => s.process))]) {
      const of = all.filter((s) => s.process === name);
      const med = (k: keyof ProcessStats) => fmt(median(of.map((s) => s[k] as number)));
      const max = (k: keyof ProcessStats) => fmt(Math.max(...of.map((s) => s[k] as number)));
      const split = of.every((s) => s.threads)
        ? (['mainMs', 'temporalCoreMs', 'otherMs'] as const).map((k) => fmt(median(of.map((s) => s.threads![k])))).join(' / ')
        : '—';
      lines.push(
        `| ${phase} | ${name} | ${med('loopP99Ms')} | ${max('loopMaxMs')} | ${med('gcCount')} | ${med('gcMs')} | ${max('gcMaxMs')} | ${med('gcMajorMs')} | ${med('cpuMs')} | ${split} |`,
      );
    }
  }
  return lines.join('\n');
}

/** Prints one phase's process figures as the run goes (the table at the end has the medians). */
export const phaseLine = (phase: string, processes: ProcessStats[]) => `  procs     ${phase}: ${describeProcessStats(processes)}`;
