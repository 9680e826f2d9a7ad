// R12, P11: a replay outlives the process's last Temporal connection closing under it. Temporal's native runtime shuts
// down when its last connection or worker goes, and a replay takes the runtime before it reads its bundle; files
// share processes (vitest.config.ts), so the world's idle close of the file before could land in that window and
// the replay failed with "failed to downcast … FinalizeWrapper". Replay files hold the runtime (holdRuntime()).
import { NativeConnection } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { TEMPORAL_ADDRESS } from '../helpers/env.js';
import { replayFixture, loadHistoryFixtures } from '../helpers/histories.js';
import { holdRuntime } from '../helpers/world.js';

holdRuntime();
const [fixture] = loadHistoryFixtures();

describe('R12 replays under a shared process', () => {
  it('R12 a replay survives the last other connection of the process closing while it reads its bundle', async () => {
    const other = await NativeConnection.connect({ address: TEMPORAL_ADDRESS });
    const replay = replayFixture(fixture!);
    await other.close();
    await expect(replay).resolves.toBeUndefined();
  });
});
