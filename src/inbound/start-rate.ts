// P7: the reconciliation flow's start budget in one process: at most `perSecond` workflow starts a second (a
// burst of up to one second's worth after an idle spell), shared by the ingress starter and the sweep of that
// process; 0 = unlimited. Starts are where an inbound backlog enters Temporal, so capping them caps what a
// draining backlog can take from deliveries (docs/architecture.md, "The two flows").
export interface StartRateLimiter {
  /** Resolves when this start may go; callers are served in the order they asked. */
  acquire(): Promise<void>;
}

const UNLIMITED: StartRateLimiter = { acquire: () => Promise.resolve() };

export function startRateLimiter(perSecond: number, now: () => number = () => performance.now()): StartRateLimiter {
  if (!(perSecond > 0)) return UNLIMITED;
  const interval = 1000 / perSecond;
  const burst = Math.max(1, Math.floor(perSecond));
  let next = -Infinity; // the earliest time the next start may go (GCRA)
  return {
    async acquire() {
      const t = now();
      next = Math.max(next, t - (burst - 1) * interval);
      const slot = next;
      next += interval;
      if (slot > t) await new Promise((resolve) => setTimeout(resolve, slot - t));
    },
  };
}
