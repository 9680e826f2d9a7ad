// Executes the seeded kill schedule (R11): kill -9 of an app process (respawned by its supervisor) or of a stack
// service, the soak's RabbitMQ broker among them (M11), restarted by scripts/stack.sh after its down time. Records
// when each fault happened and when its service was asked back and answered. R16: a restart counts only once
// `scripts/stack.sh status` finds every service answering its health check.
import type { AppName, AppSupervisor } from './apps.js';
import type { Fault } from './invariants.js';
import { APP_TARGETS, type Kill, type KillTarget } from './random.js';
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
    const fault: Fault = { target: kill.target, at };
    faults.push(fault);
    const t = `${((at - started) / 1000).toFixed(0)}s`;
    if ((APP_TARGETS as readonly string[]).includes(kill.target)) {
      say(`${t} kill -9 ${kill.target} (respawned)`);
      apps.kill(kill.target as AppName);
      return;
    }
    say(`${t} kill -9 ${kill.target}, restart in ${kill.downS}s`);
    await stack.kill(kill.target as Exclude<KillTarget, AppName>).catch((e) => restartFailures.push(`${kill.target}: ${(e as Error).message}`));
    fault.downAt = Date.now(); // the kill made (finding its processes may take a moment on a loaded machine)
    await new Promise((r) => setTimeout(r, kill.downS * 1_000));
    fault.restartAt = Date.now();
    for (let tries = 1; ; tries += 1) {
      try {
        await stack.up(kill.target === 'rabbitmq' ? 'rabbitmq' : undefined);
        const health = await stack.health();
        if (!health.ok) throw new Error(`scripts/stack.sh up returned, but not every service answers its health check:\n${health.report}`);
        fault.backAt = Date.now();
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
