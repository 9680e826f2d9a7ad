// Graceful shutdown for process entry points: on SIGTERM/SIGINT run the closers in order, once, then exit.
import type { Logger } from './logger.js';

export function onShutdown(logger: Logger, closers: (() => Promise<unknown> | unknown)[], timeoutMs = 15_000): void {
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      logger.error('shutdown timed out, exiting');
      process.exit(1);
    }, timeoutMs);
    timer.unref();
    for (const close of closers) {
      try {
        await close();
      } catch (error) {
        logger.warn({ err: error }, 'error during shutdown');
      }
    }
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}
