import { injectCluster } from '@fencekit/cluster/vitest';
import { EtcdClient, type EtcdClientOptions } from '@fencekit/etcd';

/** Endpoints of the shared cluster started in globalSetup. */
export function sharedHosts(): string[] {
  return [...injectCluster('etcd').endpoints];
}

/** Keys of one test run live under their own prefix, so runs sharing a cluster never meet. */
export const runPrefix = `fk-test-${process.pid}-${Date.now().toString(36)}`;

export function newClient(options: Partial<EtcdClientOptions> = {}): EtcdClient {
  return new EtcdClient({ hosts: sharedHosts(), prefix: runPrefix, ...options });
}
