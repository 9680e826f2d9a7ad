// The app processes of the soak (api, worker, dispatcher: src/workers/*.ts via tsx), each respawned when it exits,
// whether the schedule killed it or it stopped on its own (an unplanned exit is counted and reported).
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './stack.js';

export type AppName = 'api' | 'worker' | 'dispatcher';
export const APPS: readonly AppName[] = ['api', 'worker', 'dispatcher'];

export interface AppExit {
  app: AppName;
  at: number;
  code: number | null;
  signal: string | null;
  planned: boolean;
}

export interface AppSupervisor {
  start(): void;
  /** kill -9 of the process group; it is respawned after `respawnMs`. */
  kill(app: AppName): void;
  exits: AppExit[];
  stop(): Promise<void>;
}

export function superviseApps(options: { env: Record<string, string>; logs: string; respawnMs?: number }): AppSupervisor {
  const children = new Map<AppName, ChildProcess>();
  const planned = new Set<AppName>();
  const exits: AppExit[] = [];
  let stopping = false;

  const launch = (app: AppName) => {
    const log = openSync(join(options.logs, `${app}.log`), 'a');
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, `src/workers/${app}.ts`)], {
      cwd: ROOT,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', log, log],
      detached: true, // its own process group: kill -9 reaches every process it started
    });
    children.set(app, child);
    child.once('exit', (code, signal) => {
      exits.push({ app, at: Date.now(), code, signal, planned: planned.delete(app) || stopping });
      if (children.get(app) === child) children.delete(app);
      if (!stopping) setTimeout(() => !stopping && !children.has(app) && launch(app), options.respawnMs ?? 1_000);
    });
  };
  const signal = (child: ChildProcess, sig: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, sig);
    } catch {
      // already gone
    }
  };

  return {
    exits,
    start: () => APPS.forEach(launch),
    kill(app) {
      const child = children.get(app);
      if (!child) return;
      planned.add(app);
      signal(child, 'SIGKILL');
    },
    async stop() {
      stopping = true;
      const waits = [...children.values()].map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            const force = setTimeout(() => signal(child, 'SIGKILL'), 15_000);
            child.once('exit', () => {
              clearTimeout(force);
              resolve();
            });
            signal(child, 'SIGTERM');
          }),
      );
      await Promise.all(waits);
    },
  };
}
