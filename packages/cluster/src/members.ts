import { randomBytes } from 'node:crypto';

/** Member ids are 'n1' … 'nN' on every provider, so tests and reports can name nodes the same way. */
export function memberIds(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `n${i + 1}`);
}

/** A fresh token per cluster (etcd's initial-cluster-token), so members of two clusters can never join each other. */
export function clusterToken(): string {
  return `fencekit-${randomBytes(6).toString('hex')}`;
}
