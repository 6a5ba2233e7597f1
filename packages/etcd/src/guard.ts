import { assertEncodableKey, InvalidArgumentError, StaleFenceError } from '@fencekit/core';
import { CompareResult, CompareTarget, type ICompare, type IRequestOp } from 'etcd3';
import { callOptions } from './connection.js';
import { toBackendError } from './errors.js';
import { holdingOf } from './lease.js';
import { headOp } from './queue.js';

/**
 * The transaction guard "only if I still hold it": the create revision of my lock key equals my
 * fence. Once the key is gone (released, lease expired) or re-created, etcd fails the compare, so a
 * stale holder's write is refused by the store itself, whatever the holder believes.
 *
 * Use it in your own Txn: `etcd.kv.txn({ compare: [ownershipCompare(lease)], success: [...] })`.
 */
export function ownershipCompare(lease: object): ICompare {
  const holding = requireHolding(lease);
  return {
    key: Buffer.from(holding.key, 'utf8'),
    target: CompareTarget.Create,
    result: CompareResult.Equal,
    create_revision: holding.revision.toString(),
  };
}

/**
 * Writes `key = value` in etcd only while `lease` (an etcd lock lease or leadership) still holds:
 * one Txn guarded by `ownershipCompare`. Throws `StaleFenceError` naming the fence now at the head of
 * the queue (or none) when etcd refuses.
 */
export async function guardedPut(lease: object, key: string, value: string | Buffer): Promise<void> {
  const holding = requireHolding(lease);
  assertEncodableKey('key', key);
  const put: IRequestOp = {
    request_put: {
      key: Buffer.from(key, 'utf8'),
      value: typeof value === 'string' ? Buffer.from(value, 'utf8') : value,
    },
  };
  let response: Awaited<ReturnType<typeof holding.etcd.kv.txn>>;
  try {
    response = await holding.etcd.kv.txn(
      {
        compare: [ownershipCompare(lease)],
        success: [put],
        failure: [headOp(holding.queue)],
      },
      callOptions(holding.callTimeoutMs),
    );
  } catch (error) {
    throw toBackendError('guarded put', error);
  }
  if (response.succeeded) return;
  const head = response.responses[0]?.response_range?.kvs[0];
  throw new StaleFenceError(key, holding.revision, head ? BigInt(head.create_revision) : undefined);
}

function requireHolding(lease: object) {
  const holding = typeof lease === 'object' && lease !== null ? holdingOf(lease) : undefined;
  if (!holding)
    throw new InvalidArgumentError('lease', lease, 'a lease or leadership granted by @fencekit/etcd');
  return holding;
}
