import { request } from 'node:http';
import { InvalidArgumentError } from '@fencekit/core';
import { zookeeperMode } from './probes.js';
import type { WaitForLeaderOptions } from './types.js';
import { poll } from './wait.js';

export interface ProbeTarget {
  readonly id: string;
  readonly host: string;
  readonly port: number;
}

interface EtcdStatus {
  readonly header?: { readonly member_id?: string };
  readonly leader?: string;
}

function etcdStatus(target: ProbeTarget, timeoutMs: number): Promise<EtcdStatus> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.host,
        port: target.port,
        method: 'POST',
        path: '/v3/maintenance/status',
        timeout: timeoutMs,
        agent: false,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => {
          try {
            resolve(JSON.parse(body) as EtcdStatus);
          } catch (error) {
            reject(error);
          }
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('etcd status timed out')));
    req.on('error', reject);
    req.end('{}');
  });
}

/**
 * Asks every member for its status and returns the member most of the answering ones name as leader. An
 * isolated old leader may still name itself for an election timeout; the majority view wins.
 */
export async function etcdLeader(
  targets: readonly ProbeTarget[],
  timeoutMs = 1000,
): Promise<string | undefined> {
  const statuses = await Promise.all(targets.map((t) => etcdStatus(t, timeoutMs).catch(() => undefined)));
  const idByMember = new Map<string, string>();
  const votes = new Map<string, number>();
  statuses.forEach((status, i) => {
    const member = status?.header?.member_id;
    if (member) idByMember.set(member, targets[i]!.id);
    if (status?.leader && status.leader !== '0')
      votes.set(status.leader, (votes.get(status.leader) ?? 0) + 1);
  });
  let best: [string, number] | undefined;
  for (const entry of votes) if (!best || entry[1] > best[1]) best = entry;
  if (!best || best[1] <= targets.length / 2) return undefined;
  return idByMember.get(best[0]);
}

/** The ZooKeeper server whose `srvr` reports `Mode: leader` (or the standalone server). */
export async function zookeeperLeader(targets: readonly ProbeTarget[]): Promise<string | undefined> {
  const modes = await Promise.all(targets.map((t) => zookeeperMode(t.host, t.port).catch(() => undefined)));
  const index = modes.findIndex((mode) => mode === 'leader' || mode === 'standalone');
  return index < 0 ? undefined : targets[index]!.id;
}

/** Every etcd member names the same leader (a member that is cut off names none: leader 0, or no answer). */
export async function etcdLeaderAgreement(
  targets: readonly ProbeTarget[],
  timeoutMs = 1000,
): Promise<{ agreed: boolean; detail: string; silent: string[] }> {
  const statuses = await Promise.all(targets.map((t) => etcdStatus(t, timeoutMs).catch(() => undefined)));
  const named = statuses.map((s) => (s?.leader && s.leader !== '0' ? s.leader : undefined));
  const names = new Map(statuses.map((s, i) => [s?.header?.member_id, targets[i]!.id]));
  // A member that did not answer (stopped, slow) is told apart from one that answered it has no leader (#20).
  const detail = targets
    .map(
      (t, i) =>
        `${t.id}: ${statuses[i] === undefined ? 'no answer' : named[i] === undefined ? 'no leader' : `leader ${names.get(named[i]) ?? named[i]}`}`,
    )
    .join(', ');
  const silent = targets.filter((_, i) => statuses[i] === undefined).map((t) => t.id);
  return { agreed: named[0] !== undefined && named.every((n) => n === named[0]), detail, silent };
}

/** One ZooKeeper member reports leader (or standalone) and every other one follower. */
export async function zookeeperLeaderAgreement(
  targets: readonly ProbeTarget[],
): Promise<{ agreed: boolean; detail: string }> {
  const modes = await Promise.all(targets.map((t) => zookeeperMode(t.host, t.port).catch(() => undefined)));
  const leaders = modes.filter((m) => m === 'leader' || m === 'standalone').length;
  const detail = targets.map((t, i) => `${t.id}: ${modes[i] ?? 'not serving'}`).join(', ');
  return {
    agreed: leaders === 1 && modes.every((m) => m === 'leader' || m === 'standalone' || m === 'follower'),
    detail,
  };
}

/** Polls `leader` until it names a node other than `options.not`; bounded by `options.timeoutMs` (30 s). */
export function waitForLeader(
  leader: () => Promise<string | undefined>,
  options: WaitForLeaderOptions = {},
): Promise<string> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new InvalidArgumentError('timeoutMs', timeoutMs, 'a positive finite number of milliseconds');
  }
  return poll(
    async () => {
      const id = await leader();
      return id !== undefined && id !== options.not ? id : undefined;
    },
    {
      what: options.not ? `a leader other than ${options.not}` : 'a leader',
      timeoutMs,
      intervalMs: 200,
      signal: options.signal,
    },
  );
}
