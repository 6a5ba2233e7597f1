import { UnsupportedFaultError } from '../errors.js';
import type { FaultPrimitives } from '../faults/primitives.js';
import { clockShimError, writeClockSkew } from '../native.js';
import type { LocalNetwork } from './network.js';
import type { LocalNode } from './node.js';
import { processState } from './proc-state.js';

/**
 * The nemesis acts for processes on loopback: signals to our own child processes, the peer proxies for partitions,
 * the shim's skew file in the node's dir for clocks.
 */
export function localFaultPrimitives(network: LocalNetwork): FaultPrimitives<LocalNode> {
  return {
    clients: network.clients,
    running: async (node) => node.process.running,
    processState: async (node) => processState(node.pid),
    kill: (node) => node.process.kill('SIGKILL'),
    start: async (node) => node.process.start(),
    signal: async (node, signal) => (signal === 'STOP' ? node.process.pause() : node.process.resume()),
    cutLinks: async (pairs) => network.cutLinks(pairs),
    healLinks: async () => network.healLinks(),
    writeClock: async (node, offsetMs, rate) => {
      // No skew file means the shim could not be built (no gcc): say so rather than pretend the clock moved.
      if (!node.clockFile) {
        throw new UnsupportedFaultError(
          'clock',
          `node ${node.id}`,
          clockShimError() ?? 'the clock shim is not loaded',
        );
      }
      writeClockSkew(node.clockFile, offsetMs, rate);
    },
  };
}
