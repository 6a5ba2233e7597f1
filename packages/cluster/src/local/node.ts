import type { ClusterNode } from '../types.js';
import type { ServerProcess } from './process.js';
import type { NodeLayout } from './recipe.js';

/** A node of a local cluster: its layout, its process, and the pid it has right now. */
export class LocalNode implements ClusterNode {
  constructor(
    readonly layout: NodeLayout,
    readonly process: ServerProcess,
    /** The clock shim's skew file, when the shim is loaded into this server. */
    readonly clockFile: string | undefined,
    /** Processes started and stopped with the server on this node (its Sentinel); faults act on the server only. */
    readonly companions: readonly ServerProcess[] = [],
  ) {}
  get id(): string {
    return this.layout.id;
  }
  get endpoint(): string {
    return `127.0.0.1:${this.layout.advertisedClientPort}`;
  }
  get directEndpoint(): string {
    return `127.0.0.1:${this.layout.clientPort}`;
  }
  get pid(): number | undefined {
    return this.process.pid;
  }
  toJSON(): ClusterNode {
    return { id: this.id, endpoint: this.endpoint, directEndpoint: this.directEndpoint, pid: this.pid };
  }
}
