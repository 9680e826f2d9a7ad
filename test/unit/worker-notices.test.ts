// C11: the slow lane's "No workflows registered" warning (it runs activities only, by design) is not written to the
// worker's log; the same warning on any other task queue, and every other warning, still is.
import { describe, expect, it, vi } from 'vitest';
import { consoleWorkerLogger, isExpectedWorkerNotice } from '../../src/temporal-workers/build.js';
import { slowLaneQueue } from '../../src/shared/task-queues.js';

const NOTICE = 'No workflows registered, not polling for workflow tasks';

describe('C11 expected worker notices', () => {
  it('drops the slow lane notice only', () => {
    expect(isExpectedWorkerNotice(NOTICE, { sdkComponent: 'worker', taskQueue: slowLaneQueue('apipay-delivery') })).toBe(true);
    expect(isExpectedWorkerNotice(NOTICE, { taskQueue: 'apipay-delivery' })).toBe(false);
    expect(isExpectedWorkerNotice(NOTICE, undefined)).toBe(false);
    expect(isExpectedWorkerNotice('Worker failed', { taskQueue: slowLaneQueue('apipay-delivery') })).toBe(false);
  });

  it("the tests' and benches' console logger prints what the SDK prints, without the slow lane notice", () => {
    const written: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (written.push(String(chunk)), true));
    try {
      const logger = consoleWorkerLogger('WARN');
      logger.warn(NOTICE, { sdkComponent: 'worker', taskQueue: slowLaneQueue('q') });
      logger.warn(NOTICE, { sdkComponent: 'worker', taskQueue: 'q' });
      logger.info('below the level');
    } finally {
      spy.mockRestore();
    }
    expect(written).toHaveLength(1);
    expect(written[0]).toMatch(/^\d{4}-\d\d-\d\dT.*Z \[WARN\] No workflows registered.* taskQueue: 'q'/);
  });
});
