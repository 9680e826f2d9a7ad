// R3, O7: the total deadline of one HTTP exchange with a merchant. `AbortSignal.timeout` aborts in Node's
// timers phase, which runs before the poll phase reads sockets: after an event-loop stall longer than the deadline
// (a long GC pause, a starved CPU), an answer that had already arrived was recorded as a timeout, and a merchant that
// had answered 2xx was POSTed again (soak seed 5150). This deadline, when its timer fires, first lets the I/O that is
// already waiting be read (the poll phase runs before setImmediate's check phase), then aborts. A peer that has not
// answered is still cut off at the deadline, one loop turn later.
export interface Deadline {
  signal: AbortSignal;
  /** Stops the timer once the exchange is over (no timer left behind per attempt). */
  clear(): void;
}

export function exchangeDeadline(ms: number): Deadline {
  const controller = new AbortController();
  let immediate: NodeJS.Immediate | undefined;
  const timer = setTimeout(() => {
    immediate = setImmediate(() => controller.abort(new DOMException(`no response within ${ms} ms`, 'TimeoutError')));
  }, ms);
  timer.unref();
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer);
      if (immediate) clearImmediate(immediate);
    },
  };
}
