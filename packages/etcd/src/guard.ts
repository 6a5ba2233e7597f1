import {
  assertEncodableKey,
  BackendUnavailableError,
  InvalidArgumentError,
  StaleFenceError,
} from '@fencekit/core';
import { CompareResult, CompareTarget, type ICompare, type IRequestOp, type ITxnResponse } from 'etcd3';
import { callOptions } from './connection.js';
import { toBackendError } from './errors.js';
import { type Holding, holdingOf } from './lease.js';
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
 * The mod revision each key had after this holding's last acknowledged guarded write to it. A write
 * compares it too, so a copy of an earlier write that the network delivers late (etcd3 retried it on
 * another member and the retry was answered) fails once a later write changed the key: a key's mod
 * revision never returns to an old value. Before the holding's first write to a key, any value up to
 * its fence will do (writes of earlier holders came before it). Weak: gone with the lease.
 */
const lastWritten = new WeakMap<Holding, Map<string, bigint>>();

/** A key that changed unexpectedly is re-read and the write tried again, at most this many times. */
const MAX_WRITE_TRIES = 3;

/**
 * Writes `key = value` in etcd only while `lease` (an etcd lock lease or leadership) still holds:
 * one Txn guarded by `ownershipCompare`, and by the key's mod revision as this holding last left it
 * (see `lastWritten`). Throws `StaleFenceError` naming the fence now at the head of the queue (or
 * none) when etcd refuses. A key changed by someone else meanwhile (or by a late copy of an earlier
 * write of this holding) is taken as it is now and written over, as a plain put would: one more
 * round trip, only then.
 */
export async function guardedPut(lease: object, key: string, value: string | Buffer): Promise<void> {
  const holding = requireHolding(lease);
  assertEncodableKey('key', key);
  const keyBytes = Buffer.from(key, 'utf8');
  const put: IRequestOp = {
    request_put: { key: keyBytes, value: typeof value === 'string' ? Buffer.from(value, 'utf8') : value },
  };
  let written = lastWritten.get(holding);
  if (!written) {
    written = new Map();
    lastWritten.set(holding, written);
  }
  // One deadline for all tries: the call as a whole stays within callTimeoutMs.
  const options = callOptions(holding.callTimeoutMs);
  for (let attempt = 0; attempt < MAX_WRITE_TRIES; attempt++) {
    const known = written.get(key);
    const unchanged: ICompare =
      known === undefined
        ? {
            key: keyBytes,
            target: CompareTarget.Mod,
            result: CompareResult.Less,
            mod_revision: (holding.revision + 1n).toString(),
          }
        : {
            key: keyBytes,
            target: CompareTarget.Mod,
            result: CompareResult.Equal,
            mod_revision: known.toString(),
          };
    let response: ITxnResponse;
    try {
      response = await holding.etcd.kv.txn(
        {
          compare: [ownershipCompare(lease)],
          success: [
            {
              request_txn: {
                compare: [unchanged],
                success: [put],
                failure: [{ request_range: { key: keyBytes, keys_only: true } }],
              },
            },
          ],
          failure: [headOp(holding.queue)],
        },
        options,
      );
    } catch (error) {
      throw toBackendError('guarded put', error);
    }
    if (!response.succeeded) {
      const head = response.responses[0]?.response_range?.kvs[0];
      throw new StaleFenceError(key, holding.revision, head ? BigInt(head.create_revision) : undefined);
    }
    const inner = response.responses[0]?.response_txn;
    if (inner?.succeeded) {
      // Every write of one Txn carries the Txn's revision: the key's mod revision is now this.
      written.set(key, BigInt(response.header.revision));
      return;
    }
    const now = inner?.responses[0]?.response_range?.kvs[0];
    written.set(key, now ? BigInt(now.mod_revision) : 0n);
  }
  throw new BackendUnavailableError('etcd', `guarded put: ${key} kept changing under the holder`);
}

function requireHolding(lease: object) {
  const holding = typeof lease === 'object' && lease !== null ? holdingOf(lease) : undefined;
  if (!holding)
    throw new InvalidArgumentError('lease', lease, 'a lease or leadership granted by @fencekit/etcd');
  return holding;
}
