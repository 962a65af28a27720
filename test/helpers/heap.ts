/** What V8's old generation holds, for tests that show a stream leaves nothing there. */
import { getHeapSpaceStatistics } from 'node:v8';

/** Bytes in use in the old generation (old space and large objects), MB. */
export const oldGenerationMb = (): number =>
  getHeapSpaceStatistics()
    .filter((space) => space.space_name === 'old_space' || space.space_name === 'large_object_space')
    .reduce((sum, space) => sum + space.space_used_size, 0) / 1e6;
