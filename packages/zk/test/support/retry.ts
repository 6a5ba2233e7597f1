/**
 * Runs `attempt` up to `times` times, rethrowing the last failure: on a loaded shared machine a
 * ZooKeeper ensemble occasionally misses its first leader election within the start timeout.
 */
export async function retried<T>(times: number, attempt: () => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (n >= times) throw error;
    }
  }
}
