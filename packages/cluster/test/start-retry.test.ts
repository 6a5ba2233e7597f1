import { describe, expect, it } from 'vitest';
import { ClusterStartError } from '../src/errors.js';
import { isTransientStartFailure } from '../src/start.js';

describe('which failed local starts are tried again on fresh ports', () => {
  it('a port taken between picking and binding', () => {
    const error = new ClusterStartError('n1', 'timed out', 'java.net.BindException: Address already in use');
    expect(isTransientStartFailure(error)).toBe(true);
  });

  it('a member process that exited while booting (CI saw one ZooKeeper JVM of three do so once)', () => {
    expect(isTransientStartFailure(new ClusterStartError('n2', 'the process exited', 'INFO ...'))).toBe(true);
  });

  it('not a start that timed out with the process still running, nor any other error', () => {
    expect(isTransientStartFailure(new ClusterStartError('n1', 'timed out waiting', 'INFO serving'))).toBe(
      false,
    );
    expect(isTransientStartFailure(new Error('the process exited'))).toBe(false);
  });
});
