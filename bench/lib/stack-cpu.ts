// P8, P12, issue 33 item 4: what the processes of a benchmark and of the stack it shares the box with cost, read from
// Linux /proc (10 ms ticks): CPU time so far of a pid, of the stack's services (the pids scripts/stack.sh keeps:
// Temporal, Kafka, PostgreSQL's postmaster with its live and ended backends), and resident memory. Zero or NaN
// where /proc or the pid is not there.
import { readdirSync, readFileSync } from 'node:fs';

/** CPU time (user + system) of `pid` so far in ms; with `children`, plus its waited-for children (cutime, cstime). */
export function pidCpuMs(pid: number | string | undefined, children = false): number {
  if (pid === undefined) return 0;
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0)) * 10;
  } catch {
    return 0;
  }
}

/** Resident memory of `pid` in MB (VmRSS). */
export function pidRssMb(pid: number | string | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
  } catch {
    return Number.NaN;
  }
}

/** The pid scripts/stack.sh wrote for a service (`temporal`, `kafka`, `postgresql`), or undefined. */
export function stackPid(name: string): string | undefined {
  try {
    return readFileSync(`.data/pids/${name}.pid`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** The pids whose parent is `parent` (PostgreSQL's backends under its postmaster). */
export function childPids(parent: string): string[] {
  const out: string[] = [];
  for (const dir of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${dir}/stat`, 'utf8').split(') ')[1]!.split(' ')[1] === parent) out.push(dir);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** CPU time so far (ms) of the stack's services on this box: temporal, kafka, postgresql (all its processes). */
export function stackCpuMs(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name of ['temporal', 'kafka']) {
    const pid = stackPid(name);
    if (pid) out[name] = pidCpuMs(pid);
  }
  const pg = stackPid('postgresql');
  if (pg) out.postgresql = childPids(pg).reduce((ms, pid) => ms + pidCpuMs(pid), pidCpuMs(pg, true));
  return out;
}
