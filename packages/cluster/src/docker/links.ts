import type { DockerNode } from './node.js';

const CHAIN = 'FENCEKIT';

/**
 * Server ↔ server links between containers, cut with iptables DROP rules in a chain of our own (so a heal flushes
 * only what we added). Each cut pair gets rules in both containers, for every address of the other one: a member
 * on two networks must not stay reachable through the second.
 */
export class DockerLinks {
  /** Containers whose chain exists and is hooked into INPUT and OUTPUT. */
  private readonly chained = new Set<string>();
  private readonly byId: ReadonlyMap<string, DockerNode>;

  constructor(nodes: readonly DockerNode[]) {
    this.byId = new Map(nodes.map((n) => [n.id, n]));
  }

  async cut(pairs: ReadonlyArray<readonly [string, string]>): Promise<void> {
    const rules = new Map<string, string[]>();
    for (const [a, b] of pairs) {
      for (const [self, other] of [
        [a, b],
        [b, a],
      ] as const) {
        const peer = this.member(other);
        const list = rules.get(self) ?? [];
        for (const address of peer.addresses)
          list.push(`-A ${CHAIN} -s ${address} -j DROP`, `-A ${CHAIN} -d ${address} -j DROP`);
        rules.set(self, list);
      }
    }
    await Promise.all(
      [...rules].map(async ([id, list]) => {
        const node = this.member(id);
        await this.ensureChain(node);
        await node.iptables(list);
      }),
    );
  }

  async heal(): Promise<void> {
    await Promise.all([...this.chained].map((id) => this.member(id).iptables([`-F ${CHAIN}`])));
  }

  private async ensureChain(node: DockerNode): Promise<void> {
    if (this.chained.has(node.id)) return;
    await node.shell.check(
      `iptables -w -N ${CHAIN} 2>/dev/null; ` +
        `iptables -w -C INPUT -j ${CHAIN} 2>/dev/null || iptables -w -I INPUT -j ${CHAIN}; ` +
        `iptables -w -C OUTPUT -j ${CHAIN} 2>/dev/null || iptables -w -I OUTPUT -j ${CHAIN}`,
    );
    this.chained.add(node.id);
  }

  /** Pairs come from a checked partition spec, so every id is a member. */
  private member(id: string): DockerNode {
    return this.byId.get(id)!;
  }
}
