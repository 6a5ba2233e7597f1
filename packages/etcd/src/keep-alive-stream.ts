import {
  type Etcd3,
  type ICallable,
  type IDuplexStream,
  type ILeaseKeepAliveRequest,
  type ILeaseKeepAliveResponse,
  LeaseClient,
} from 'etcd3';

/** The parts of `etcd3`'s internal connection pool used here (a member is one of its `hosts`). */
type Host = object;
interface Pool extends ICallable<Host> {
  readonly hosts?: unknown;
  withConnection<R>(
    service: 'Lease',
    fn: Parameters<ICallable<Host>['withConnection']>[1],
    order?: Generator<Host, void, unknown>,
  ): Promise<R>;
}

export type KeepAliveStream = IDuplexStream<ILeaseKeepAliveRequest, ILeaseKeepAliveResponse>;

/** A keep-alive stream and the member it runs through (opaque: only compared, to avoid it next time). */
export interface OpenedStream {
  readonly stream: KeepAliveStream;
  readonly member: unknown;
}

/**
 * Opens a lease keep-alive stream, on any member but `avoid` if another one is configured. `etcd3`
 * picks a member at random (its circuit breaker is off, see connection.ts), so a session reopening
 * after its stream went silent would land on that same silent member one time in three and could lose
 * its lease while the two others serve. This goes through `etcd3`'s own `LeaseClient` and pool (same
 * auth, call options and failure marking), only handing it a member order with `avoid` last; the pool
 * and its hosts are internal to `etcd3` (checked here, so a change there falls back to its order).
 */
export async function openKeepAlive(etcd: Etcd3, avoid: unknown): Promise<OpenedStream> {
  const pool = (etcd as unknown as { pool?: Pool }).pool;
  const hosts = pool?.hosts;
  if (!pool || !Array.isArray(hosts) || typeof pool.withConnection !== 'function') {
    return { stream: await etcd.leaseClient.leaseKeepAlive(), member: undefined };
  }
  let member: unknown;
  const members = hosts as Host[];
  const steering: ICallable<Host> = {
    exec: pool.exec.bind(pool),
    markFailed: pool.markFailed.bind(pool),
    callOptionsFactory: pool.callOptionsFactory,
    withConnection: (service, fn) =>
      pool.withConnection(
        service as 'Lease',
        (args) => {
          member = args.resource;
          return fn(args);
        },
        preferring(members, avoid),
      ),
  };
  const stream = await new LeaseClient(steering).leaseKeepAlive();
  return { stream, member };
}

/** Every host but `avoid` in a random order, then `avoid`, round and round (the pool stops after one round). */
function* preferring(hosts: readonly Host[], avoid: unknown): Generator<Host, void, unknown> {
  const others = hosts.filter((h) => h !== avoid);
  for (let i = others.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [others[i], others[j]] = [others[j] as Host, others[i] as Host];
  }
  const order = hosts.length === others.length ? others : [...others, avoid as Host];
  for (;;) yield* order;
}
