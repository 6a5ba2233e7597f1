import type { ClientProxies } from '../faults/client-proxies.js';
import type { FaultPrimitives } from '../faults/primitives.js';
import type { DockerLinks } from './links.js';
import type { DockerNode } from './node.js';

/**
 * The nemesis acts for containers: signals to the server process inside its container (the container and its
 * mapped port stay, so clients are not stranded), iptables for partitions, the shim's skew file inside the
 * container for clocks.
 */
export function dockerFaultPrimitives(
  clients: ClientProxies,
  links: DockerLinks,
): FaultPrimitives<DockerNode> {
  return {
    clients,
    running: (node) => node.running(),
    processState: (node) => node.processState(),
    kill: (node) => node.signal('KILL'),
    start: (node) => node.startServer(),
    signal: (node, signal) => node.signal(signal),
    cutLinks: (pairs) => links.cut(pairs),
    healLinks: () => links.heal(),
    writeClock: (node, offsetMs, rate) => node.writeClock(offsetMs, rate),
  };
}
