import { readdir, readFile, readlink } from 'node:fs/promises';
import type { Socket } from 'node:net';

/**
 * A fault on the connections one client process opened (`Faults.cutProcess`): held without a byte passing
 * (`reset: false`) or reset with an RST (`reset: true`), open ones and every new one, until healed.
 */
export interface CallerFault {
  /** Whether an accepted connection was opened by the faulted process. */
  readonly owns: (socket: Socket) => Promise<boolean>;
  readonly reset: boolean;
}

/** How long one reading of the kernel's tables answers for connections accepted meanwhile. */
const SNAPSHOT_MS = 20;

/** The kernel's view at one moment: 'caller>callee' address pairs of loopback TCP sockets, and the process's sockets. */
interface Snapshot {
  readonly at: number;
  readonly inodeOf: ReadonlyMap<string, string>;
  readonly sockets: ReadonlySet<string>;
}

/**
 * Tells an accepted loopback connection's calling process from the kernel's tables, as peer proxies do
 * (source.ts): /proc/net/tcp gives the caller's socket inode, /proc/<pid>/fd whether `pid` holds it. One
 * reading of both serves every connection looked up within SNAPSHOT_MS (a fault starts on all of a process's
 * connections at once, and a busy host's tables are long); a connection the reading does not know is looked
 * up once more in a fresh one. A connection it cannot place (closed meanwhile) is not the process's.
 */
export function callerFault(pid: number, reset: boolean): CallerFault {
  let snapshot: Promise<Snapshot> | undefined;
  const take = (): Promise<Snapshot> => {
    const at = performance.now();
    snapshot = Promise.all([tcpTable(), processSockets(pid)]).then(([inodeOf, sockets]) => ({
      at,
      inodeOf,
      sockets,
    }));
    return snapshot;
  };
  const lookup = (view: Snapshot, key: string) => {
    const inode = view.inodeOf.get(key);
    return inode === undefined ? undefined : view.sockets.has(inode);
  };
  return {
    reset,
    async owns(socket) {
      const { remoteAddress, remotePort, localAddress, localPort } = socket;
      if (!remoteAddress || !remotePort || !localAddress || !localPort) return false;
      const key = `${plain(remoteAddress)}:${remotePort}>${plain(localAddress)}:${localPort}`;
      const cached = snapshot;
      const fresh = cached && performance.now() - (await cached).at < SNAPSHOT_MS ? cached : take();
      const found = lookup(await fresh, key);
      if (found !== undefined) return found;
      // Accepted after that reading was taken: read again (once).
      return lookup(await (snapshot === fresh ? take() : snapshot!), key) ?? false;
    },
  };
}

const plain = (address: string) => address.replace(/^::ffff:/, '');

/** A /proc/net/tcp{,6} address as 'a.b.c.d:port' (IPv4 or IPv4-mapped); undefined for real IPv6. */
function parse(field: string): string | undefined {
  const [hex, portHex] = field.split(':');
  if (!hex || !portHex) return undefined;
  const v4 = hex.length === 8 ? hex : hex.startsWith('0000000000000000FFFF0000') ? hex.slice(24) : undefined;
  if (v4 === undefined) return undefined;
  const octets = [6, 4, 2, 0].map((i) => Number.parseInt(v4.slice(i, i + 2), 16));
  return `${octets.join('.')}:${Number.parseInt(portHex, 16)}`;
}

/** Every TCP socket's inode by its 'local>remote' addresses. */
async function tcpTable(): Promise<Map<string, string>> {
  const inodeOf = new Map<string, string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n')) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      const local = parse(fields[1]!);
      const remote = parse(fields[2]!);
      if (local && remote && fields[9] !== '0') inodeOf.set(`${local}>${remote}`, fields[9]!);
    }
  }
  return inodeOf;
}

/** The socket inodes `pid` holds (empty when it cannot be read). */
async function processSockets(pid: number): Promise<Set<string>> {
  const sockets = new Set<string>();
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
  await Promise.all(
    fds.map(async (fd) => {
      const link = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      if (link.startsWith('socket:[')) sockets.add(link.slice(8, -1));
    }),
  );
  return sockets;
}
