import { readdirSync, readlinkSync } from 'node:fs';
import { readdir, readlink } from 'node:fs/promises';

/**
 * The inodes of the sockets a process holds open, from its /proc fd links (empty when it has gone): how the
 * client-fault probes tell one client's connections from another's in the kernel's TCP tables.
 */
const SOCKET_LINK = 'socket:[';
const inodeOf = (link: string): string | undefined =>
  link.startsWith(SOCKET_LINK) ? link.slice(SOCKET_LINK.length, -1) : undefined;

/** Synchronous: a client holds a few dozen descriptors, and one readlink each is cheap next to a thread-pool hop. */
export function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return inodes;
  }
  for (const fd of fds) {
    try {
      const inode = inodeOf(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (inode !== undefined) inodes.add(inode);
    } catch {
      // closed meanwhile
    }
  }
  return inodes;
}

/** The same without blocking, for probes that run beside the fault proxies on one event loop. */
export async function socketInodesAsync(pid: number): Promise<Set<string>> {
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
  const links = await Promise.all(fds.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')));
  return new Set(links.map(inodeOf).filter((inode): inode is string => inode !== undefined));
}
