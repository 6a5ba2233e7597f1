import type { SshNode } from './node.js';
import { cutScript, healLinksScript } from './scripts.js';

/**
 * Server ↔ server links between nodes, cut with iptables DROP rules on the nodes, each tagged with this run's
 * comment: a heal removes exactly this run's rules, and a later run finds any left behind. A cut pair gets rules
 * on both nodes, so neither direction passes whichever side sends first.
 */
export class SshLinks {
  /** Nodes that may hold rules of ours (heal asks only them). */
  private readonly touched = new Set<string>();
  private readonly byId: ReadonlyMap<string, SshNode>;

  constructor(
    nodes: readonly SshNode[],
    private readonly runId: string,
  ) {
    this.byId = new Map(nodes.map((n) => [n.id, n]));
  }

  async cut(pairs: ReadonlyArray<readonly [string, string]>): Promise<void> {
    const peers = new Map<string, Set<string>>();
    for (const [a, b] of pairs) {
      for (const [self, other] of [
        [a, b],
        [b, a],
      ] as const) {
        const set = peers.get(self) ?? new Set<string>();
        set.add(this.member(other).host);
        peers.set(self, set);
      }
    }
    await Promise.all(
      [...peers].map(async ([id, hosts]) => {
        this.touched.add(id);
        await this.member(id).check(cutScript(this.runId, [...hosts]), { what: 'iptables cut' });
      }),
    );
  }

  async heal(): Promise<void> {
    await Promise.all(
      [...this.touched].map((id) =>
        this.member(id).check(healLinksScript(this.runId), { what: 'iptables heal' }),
      ),
    );
    this.touched.clear();
  }

  /** Pairs come from a checked partition spec, so every id is a member. */
  private member(id: string): SshNode {
    return this.byId.get(id)!;
  }
}
