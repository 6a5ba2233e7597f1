import type { Operation } from '../history/types.js';
import { describeOperation, type Inconsistent, inconsistent, type Model } from './model.js';
import { canonicalJson, field, unsupported } from './values.js';

/** Who holds the lock, the last fence granted, and by when the holder's lease has surely run out. */
export interface MutexState {
  holder: string | null;
  fence: bigint;
  /** Earliest time the lease may have expired (grant call + ttl); Infinity without leases. */
  expiresAt: number;
}

export interface MutexOp {
  kind: 0 | 1;
  /** The holder identity: `owner` from the op's value, else the process. */
  who: string;
  /** Fence returned by an acquire, when it carries one and fences are checked. */
  fence: bigint | undefined;
  known: boolean;
  /** Latest time this op may take effect (its return), for lease expiry. */
  ret: number;
  /** Grant call + ttl: the earliest the lease this acquire grants may expire. */
  expiresAt: number;
}

export interface MutexOptions {
  /** Check that every acquire's `fence` is above all earlier grants (default true when fences appear). */
  fences?: boolean;
  /**
   * Lease length in ms, or per-op `ttlMs` in the acquire's input: a lease may expire, after which
   * another acquire is legal. Times in the history are ns. Without it, leases never expire.
   */
  leaseMs?: number;
}

const ACQUIRE = 0;
const RELEASE = 1;
const FREE: MutexState = { holder: null, fence: -1n, expiresAt: Number.POSITIVE_INFINITY };

/**
 * A lock that tracks its holder (knossos's mutex does not): acquire is legal only when free (or the
 * holder's lease may have expired), release only by the holder. With fences, each grant's fence must
 * exceed every earlier one. Holders are named by `owner` in the op's value, else by process.
 */
export function mutex(options: MutexOptions = {}): Model<MutexState, MutexOp> {
  const checkFences = options.fences ?? true;
  return {
    name: 'mutex',
    init: () => FREE,
    prepare(op: Operation): MutexOp {
      const owner = field(op.input, 'owner') ?? field(op.output, 'owner');
      const who =
        owner === undefined || owner === null
          ? String(op.process)
          : typeof owner === 'string'
            ? owner
            : canonicalJson(owner);
      const known = op.status === 'ok';
      if (op.f === 'acquire') {
        const rawFence = field(op.output, 'fence');
        const fence =
          checkFences && known && rawFence !== undefined && rawFence !== null
            ? BigInt(rawFence as string)
            : undefined;
        const ttl = field(op.input, 'ttlMs') ?? options.leaseMs;
        const expiresAt = typeof ttl === 'number' ? op.call + ttl * 1e6 : Number.POSITIVE_INFINITY;
        return { kind: ACQUIRE, who, fence, known, ret: op.ret, expiresAt };
      }
      if (op.f === 'release')
        return { kind: RELEASE, who, fence: undefined, known, ret: op.ret, expiresAt: 0 };
      return unsupported('mutex', op);
    },
    step(state: MutexState, op: MutexOp): MutexState | Inconsistent {
      if (op.kind === ACQUIRE) {
        if (state.holder !== null && !(op.ret > state.expiresAt)) {
          return inconsistent(`${op.who} acquired while ${state.holder} held the lock`);
        }
        if (op.fence !== undefined && op.fence <= state.fence) {
          return inconsistent(`${op.who} was granted fence ${op.fence}, not above ${state.fence}`);
        }
        return { holder: op.who, fence: op.fence ?? state.fence, expiresAt: op.expiresAt };
      }
      if (state.holder !== op.who) {
        return inconsistent(
          state.holder === null
            ? `${op.who} released a free lock`
            : `${op.who} released the lock ${state.holder} held`,
        );
      }
      return { holder: null, fence: state.fence, expiresAt: Number.POSITIVE_INFINITY };
    },
    equal: (a, b) => a.holder === b.holder && a.fence === b.fence && a.expiresAt === b.expiresAt,
    hash: (s) => hashString(`${s.holder}|${s.fence}|${s.expiresAt}`),
    describeState: (s) =>
      s.holder === null ? `free (fence ${s.fence})` : `held by ${s.holder} (fence ${s.fence})`,
    describe: describeOperation,
  };
}

/** FNV-1a, for model hashes of small strings. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}
