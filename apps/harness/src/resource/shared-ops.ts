/**
 * The protected resource's side of the `semaphore` and `rwlock` workloads, kept in the resource
 * process beside the inventory store (server.ts routes the ops here). What it records is the ground
 * truth the `semaphore` and `rwlock` checks judge (packages/checker/README.md, "Lock histories").
 *
 * - Semaphore pool: `sem-enter` (never refused: a semaphore's fence cannot tell a lapsed holder from the
 *   N valid ones) and `sem-leave`; each entry records how many permits were inside after it.
 * - Read-write register: with fencing on, `rw-enter` refuses a writer whose fence is not above every
 *   fence that entered and a reader whose fence is not above every writer's that entered; `rw-write`
 *   refuses a fence below one that entered since; `rw-read` refuses a fence below an entered writer's.
 *   Write fences exceed every earlier grant and read fences every earlier writer's (core's contract),
 *   so only a holder whose lease lapsed is refused.
 */
export type Emit = (f: string, value: Record<string, unknown>) => number;

export class SharedResource {
  /** Permits inside the pool, per client. */
  readonly #inside = new Map<number | string, number>();
  #highest: bigint | undefined;
  #highestWriter: bigint | undefined;
  #register: { value: string; fence: string | null } | undefined;

  constructor(readonly fencing: boolean) {}

  /** Serves `request` when it is one of these ops; undefined otherwise. */
  handle(request: Record<string, unknown>, emit: Emit): Record<string, unknown> | undefined {
    const client = request.client as number | string;
    const fenceText = typeof request.fence === 'string' ? request.fence : undefined;
    const fence = fenceText === undefined ? undefined : BigInt(fenceText);
    const withFence = fenceText === undefined ? {} : { fence: fenceText };
    switch (request.op) {
      case 'sem-enter': {
        const permits = request.permits as number;
        this.#inside.set(client, (this.#inside.get(client) ?? 0) + permits);
        const inside = this.#held();
        const time = emit('sem-enter', {
          client,
          permits,
          limit: request.limit as number,
          ...withFence,
          inside,
          accepted: true,
        });
        return { accepted: true, inside, time };
      }
      case 'sem-leave': {
        this.#inside.delete(client);
        return { time: emit('sem-leave', { client, ...withFence, inside: this.#held() }) };
      }
      case 'rw-enter': {
        const mode = request.mode === 'write' ? 'write' : 'read';
        const floor = mode === 'write' ? this.#highest : this.#highestWriter;
        const accepted = this.#admits(fence, floor);
        if (accepted && fence !== undefined) {
          if (this.#highest === undefined || fence > this.#highest) this.#highest = fence;
          if (mode === 'write' && (this.#highestWriter === undefined || fence > this.#highestWriter)) {
            this.#highestWriter = fence;
          }
        }
        return { accepted, time: emit('rw-enter', { client, mode, ...withFence, accepted }) };
      }
      case 'rw-write': {
        // Its own entry may be the highest: only a fence that entered since it refuses it.
        const accepted = this.#admits(fence, this.#highest, true);
        const value = String(request.value);
        if (accepted) this.#register = { value, fence: fenceText ?? null };
        return { accepted, time: emit('rw-write', { client, value, ...withFence, accepted }) };
      }
      case 'rw-read': {
        const accepted = this.#admits(fence, this.#highestWriter);
        const seen = accepted ? this.#register : undefined;
        const answer = { value: seen?.value ?? null, writtenFence: seen?.fence ?? null };
        return { accepted, ...answer, time: emit('rw-read', { client, ...withFence, ...answer, accepted }) };
      }
      case 'rw-leave':
        return { time: emit('rw-leave', { client, ...withFence }) };
      default:
        return undefined;
    }
  }

  /** Fencing off, or no fence: admitted. Else above `floor` (or equal, for a holder's own entry). */
  #admits(fence: bigint | undefined, floor: bigint | undefined, orEqual = false): boolean {
    if (!this.fencing || fence === undefined || floor === undefined) return true;
    return orEqual ? fence >= floor : fence > floor;
  }

  #held(): number {
    let sum = 0;
    for (const permits of this.#inside.values()) sum += permits;
    return sum;
  }
}
