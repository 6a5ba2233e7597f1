import { type ServedCluster, startServedCluster } from '@fencekit/cluster';

export type Ensemble = ServedCluster<{
  /** The follower every client uses, as `host:port`. */
  servers: string;
  follower: string;
  leader: string | undefined;
}>;

/** Starts `ensemble-process.js` and waits for its endpoints (bounded: a start takes seconds). */
export function startEnsemble(timeoutMs = 120_000): Promise<Ensemble> {
  return startServedCluster(new URL('./ensemble-process.js', import.meta.url), timeoutMs);
}
