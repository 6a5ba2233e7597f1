import type { TestProject } from 'vitest/node';
import { type LocalEtcd, startLocalEtcd } from './local-etcd.js';

declare module 'vitest' {
  export interface ProvidedContext {
    etcdEndpoints: string[];
  }
}

let cluster: LocalEtcd | undefined;

/** One real 3-member etcd shared by every integration test file of this package. */
export async function setup(project: TestProject): Promise<void> {
  cluster = await startLocalEtcd(3);
  project.provide('etcdEndpoints', cluster.endpoints);
}

export async function teardown(): Promise<void> {
  await cluster?.close();
}
