import { readdir, readFile, readlink } from 'node:fs/promises';
import type { Socket } from 'node:net';

/** '127.0.0.1', port → /proc/net/tcp's '0100007F:1F90' (address little-endian hex, port big-endian hex). */
function procAddress(ip: string, port: number): string {
  const hex = ip
    .split('.')
    .reverse()
    .map((octet) => Number(octet).toString(16).padStart(2, '0'))
    .join('');
  return `${hex}:${port.toString(16).padStart(4, '0')}`.toUpperCase();
}

/** The inode of the socket on the *calling* side of an accepted loopback connection. */
async function callerInode(socket: Socket): Promise<string | undefined> {
  const { remoteAddress, remotePort, localAddress, localPort } = socket;
  if (!remoteAddress || !remotePort || !localAddress || !localPort) return undefined;
  const caller = procAddress(remoteAddress.replace(/^::ffff:/, ''), remotePort);
  const callee = procAddress(localAddress.replace(/^::ffff:/, ''), localPort);
  const table = await readFile('/proc/net/tcp', 'utf8');
  for (const line of table.split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields[1] === caller && fields[2] === callee) return fields[9];
  }
  return undefined;
}

async function ownsSocket(pid: number, inode: string): Promise<boolean> {
  const wanted = `socket:[${inode}]`;
  let fds: string[];
  try {
    fds = await readdir(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  for (const fd of fds) {
    try {
      if ((await readlink(`/proc/${pid}/fd/${fd}`)) === wanted) return true;
    } catch {
      // fd closed meanwhile
    }
  }
  return false;
}

/**
 * Which of our server processes opened this loopback connection. Servers can't be told which source address to
 * dial from (etcd's peer URLs are shared by all members), so peer proxies learn the caller from the kernel:
 * /proc/net/tcp maps the caller's port to a socket inode, and /proc/<pid>/fd shows which process holds it.
 * Needs no privilege for processes of the same user.
 */
export function sourceIdentifier(candidates: () => ReadonlyArray<{ id: string; pid: number | undefined }>) {
  return async (socket: Socket): Promise<string | undefined> => {
    const inode = await callerInode(socket);
    if (!inode || inode === '0') return undefined;
    for (const { id, pid } of candidates()) {
      if (pid !== undefined && (await ownsSocket(pid, inode))) return id;
    }
    return undefined;
  };
}
