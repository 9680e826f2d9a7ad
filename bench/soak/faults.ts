// Executes the seeded kill schedule (R11): kill -9 of an app process (respawned by its supervisor) or of a stack
// service (restarted by scripts/stack.sh after its down time). Records when each fault happened. R16: a restart
// counts only once `scripts/stack.sh status` finds every service answering its health check.
import type { AppName, AppSupervisor } from './apps.js';
import type { Fault } from './invariants.js';
import { APP_TARGETS, type Kill } from './random.js';
import type { SoakStack } from './stack.js';

export interface FaultRunner {
  faults: Fault[];
  restartFailures: string[];
  /** Cancels kills not yet made and waits for a restart in progress. */
  stop(): Promise<void>;
}

export function runKillSchedule(options: { kills: Kill[]; apps: AppSupervisor; stack: SoakStack; say: (line: string) => void }): FaultRunner {
  const { apps, stack, say } = options;
  const faults: Fault[] = [];
  const restartFailures: string[] = [];
  let current: Promise<void> = Promise.resolve();
  const started = Date.now();

  const execute = async (kill: Kill) => {
    const at = Date.now();
    faults.push({ target: kill.target, at });
    const t = `${((at - started) / 1000).toFixed(0)}s`;
    if (APP_TARGETS.includes(kill.target)) {
      say(`${t} kill -9 ${kill.target} (respawned)`);
      apps.kill(kill.target as AppName);
      return;
    }
    say(`${t} kill -9 ${kill.target}, restart in ${kill.downS}s`);
    await stack.kill(kill.target as 'kafka' | 'postgresql' | 'temporal').catch((e) => restartFailures.push(`${kill.target}: ${(e as Error).message}`));
    await new Promise((r) => setTimeout(r, kill.downS * 1_000));
    for (let tries = 1; ; tries += 1) {
      try {
        await stack.up();
        const health = await stack.health();
        if (!health.ok) throw new Error(`scripts/stack.sh up returned, but not every service answers its health check:\n${health.report}`);
        say(`${((Date.now() - started) / 1000).toFixed(0)}s ${kill.target} back (health checks answer)`);
        return;
      } catch (error) {
        if (tries >= 5) return void restartFailures.push(`${kill.target}: ${(error as Error).message.slice(0, 500)}`);
        await new Promise((r) => setTimeout(r, 2_000));
      }
    }
  };
  const timers = options.kills.map((kill) =>
    setTimeout(() => {
      current = current.then(() => execute(kill));
    }, kill.atS * 1_000),
  );
  return {
    faults,
    restartFailures,
    async stop() {
      for (const timer of timers) clearTimeout(timer);
      await current;
    },
  };
}
