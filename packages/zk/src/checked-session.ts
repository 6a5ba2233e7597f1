import { InvalidArgumentError } from '@fencekit/core';
import { parseServers } from './servers.js';
import { type SessionOptions, ZkSession as UncheckedZkSession } from './session.js';

/**
 * The exported `ZkSession`: the session, with its connection string checked first (`parseServers`).
 * It is public and may be built directly, bypassing `createSession`; unchecked, a bad port or a
 * `user:password@` entry reaches node-zookeeper-client, whose timer throws where no caller can catch
 * it (the process dies, printing the password). Kept in its own file: the check is all it adds.
 */
export class ZkSession extends UncheckedZkSession {
  constructor(options: SessionOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new InvalidArgumentError('options', options, 'an object with servers');
    }
    super({ ...options, servers: parseServers(options.servers) });
  }
}
