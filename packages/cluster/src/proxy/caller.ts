import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
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
/** Fresh readings before a connection the tables do not show is taken for another process's. */
const LOOKUPS = 3;

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
 * up in up to LOOKUPS fresh ones. A connection it cannot place (closed meanwhile) is not the process's.
 */
export function callerFault(pid: number, reset: boolean): CallerFault {
  let snapshot: Promise<Snapshot> | undefined;
  /** The proxies' ports as the tables write them: only rows towards them are parsed (a busy host has thousands). */
  const callees = new Set<string>();
  const take = (): Promise<Snapshot> => {
    const inodeOf = tcpTable(callees);
    const sockets = processSockets(pid);
    // Stamped when read: the lookups of the next SNAPSHOT_MS share it (a connection accepted while it was
    // read and missing from it is looked up again below).
    snapshot = Promise.resolve({ at: performance.now(), inodeOf, sockets });
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
      callees.add(portHex(localPort));
      const cached = snapshot;
      if (cached && performance.now() - (await cached).at < SNAPSHOT_MS) {
        const found = lookup(await cached, key);
        if (found !== undefined) return found;
      }
      // Not in a recent reading: accepted after it, or skipped (the kernel writes a long table in pieces, and
      // a row can go missing from a reading while sockets come and go). Read again, a few times.
      for (let tries = 0; tries < LOOKUPS; tries++) {
        const found = lookup(await take(), key);
        if (found !== undefined) return found;
      }
      return false;
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

const portHex = (port: number) => `:${port.toString(16).toUpperCase().padStart(4, '0')} `;

/**
 * The inode of every TCP socket towards one of `callees` (ports as `portHex` writes them), by 'local>remote'.
 * Read synchronously: on a loaded host every turn of the event loop between the pieces of a long table cost
 * tens of ms while the faulted client waited stopped, and gave sockets more time to come and go mid-read.
 */
function tcpTable(callees: ReadonlySet<string>): Map<string, string> {
  const inodeOf = new Map<string, string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      // The remote address is the third field: a cheap test first, the split only for candidates.
      if (![...callees].some((port) => line.includes(port))) continue;
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      const local = parse(fields[1]!);
      const remote = parse(fields[2]!);
      if (local && remote && fields[9] !== '0') inodeOf.set(`${local}>${remote}`, fields[9]!);
    }
  }
  return inodeOf;
}

/**
 * The socket inodes `pid` holds (empty when it cannot be read). Read synchronously: a client has a few dozen
 * descriptors, and one readlink each through the thread pool cost far more on a loaded host.
 */
function processSockets(pid: number): Set<string> {
  const sockets = new Set<string>();
  let fds: string[] = [];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return sockets;
  }
  for (const fd of fds) {
    try {
      const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (link.startsWith('socket:[')) sockets.add(link.slice(8, -1));
    } catch {
      // closed meanwhile
    }
  }
  return sockets;
}
