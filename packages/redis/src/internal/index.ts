/** Not public API: the pieces @fencekit/redlock and the test tooling (mutants) build on. May change in any release. */
export { CANCEL_TIMEOUT_MS, CLOSE_BOUND_MS } from '../bounds.js';
export { RedisLockClient, type RedisLockClientOptions } from '../client.js';
export {
  assertSingleNodeConnection,
  closeConnection,
  DEFAULT_COMMAND_TIMEOUT_MS,
  duplicateConnection,
  isRedisInstance,
  type OpenedConnection,
  openConnection,
  QUIT_TIMEOUT_MS,
  type RedisConnection,
} from '../connection.js';
export { lastConnectionError, neverConnectedReason, trackConnectionState } from '../connection-state.js';
export {
  closeClient,
  duplicateClient,
  isClusterInstance,
  type OpenedClient,
  openClient,
  type RedisClient,
  type RedisClusterConnection,
  type RedisDeployment,
  waitForReplicasOf,
} from '../deployment.js';
export { classifyFailure, didNotTakeEffect, errorMessage } from '../failures.js';
export {
  DEFAULT_KEY_PREFIX,
  type ResourceKeys,
  resourceKeys,
  resourceWakeChannel,
  wakeChannel,
} from '../keys.js';
export {
  type AttemptReply,
  type AttemptRequest,
  LockNode,
  type ReleaseReply,
  type Requeue,
} from '../node.js';
export { newOwnerToken } from '../owner.js';
export { CommandDeadlines, callScript, LuaScript } from '../script-call.js';
export { RedisSharedLockClient, type RedisSharedLockClientOptions } from '../shared-client.js';
export { type AttemptOutcome, STOP_GRACE_MS, Waiter, type WaitPlan, waitForGrant } from '../waiter.js';
export { WakeSubscriber } from '../wake.js';
