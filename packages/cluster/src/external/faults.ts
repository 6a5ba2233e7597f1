import { ServerFaultRefusedError } from '../errors.js';
import type { ClientProxies } from '../faults/client-proxies.js';
import { FaultController } from '../faults/controller.js';
import type { EffectQuery, Observation } from '../faults/effects.js';
import type { FaultPrimitives, FaultTarget } from '../faults/primitives.js';
import type { PromotionQuery } from '../faults/promotion.js';
import type { ClusterNode, PromotionFault } from '../types.js';

/** Effects that only a fault on the servers has: probing them on servers nobody faulted would mean nothing. */
const SERVER_EFFECTS: ReadonlySet<string> = new Set([
  'kill',
  'pause',
  'partition',
  'clock',
  'failover',
  'splitBrain',
]);

/** Primitives that act on server processes or their links: never reached (every such call is refused first). */
function refusingPrimitives<N extends ClusterNode>(clients: ClientProxies): FaultPrimitives<N> {
  const refuse = (fault: string) => () => Promise.reject(new ServerFaultRefusedError(fault));
  return {
    clients,
    running: refuse('kill'),
    processState: () => Promise.resolve(undefined),
    kill: refuse('kill'),
    start: refuse('restart'),
    signal: refuse('pause'),
    cutLinks: refuse('partition'),
    // Nothing was cut: a heal has no server link to restore.
    healLinks: () => Promise.resolve(),
    writeClock: refuse('clock'),
  };
}

/**
 * The nemesis of a cluster fencekit does not control: the client-side faults (cutClients, cutProcess, latency,
 * toxics) and their probes are the shared controller's, on the proxies between the clients and each endpoint;
 * every fault on the servers is refused by name, before anything is touched.
 */
export class ExternalFaults<N extends ClusterNode> extends FaultController<N> {
  constructor(target: FaultTarget<N>, clients: ClientProxies) {
    super(target, refusingPrimitives<N>(clients));
  }

  override async kill(_id: string): Promise<void> {
    throw new ServerFaultRefusedError('kill');
  }

  override async restart(_id: string): Promise<void> {
    throw new ServerFaultRefusedError('restart');
  }

  override async pause(_id: string): Promise<void> {
    throw new ServerFaultRefusedError('pause');
  }

  override async resume(_id: string): Promise<void> {
    throw new ServerFaultRefusedError('resume');
  }

  override async partition(): Promise<void> {
    throw new ServerFaultRefusedError('partition');
  }

  override async clock(): Promise<void> {
    throw new ServerFaultRefusedError('clock');
  }

  override async failover(): Promise<PromotionFault> {
    throw new ServerFaultRefusedError('failover');
  }

  override async splitBrain(): Promise<PromotionFault> {
    throw new ServerFaultRefusedError('splitBrain');
  }

  override async observe(query: EffectQuery | PromotionQuery): Promise<Observation> {
    const fault = (query as { fault?: unknown } | null)?.fault;
    if (typeof fault === 'string' && SERVER_EFFECTS.has(fault)) throw new ServerFaultRefusedError(fault);
    return super.observe(query);
  }
}
