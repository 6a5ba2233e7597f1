import { readdir, readFile, readlink } from 'node:fs/promises';
import type { Socket } from 'node:net';

/**
 * A /proc/net/tcp{,6} address ('0100007F:1F90', or IPv6 words such as '0000000000000000FFFF00000100007F:1F90' for
 * an IPv4-mapped socket, which is what the JVM opens) as 'a.b.c.d:port'; undefined for real IPv6 addresses.
 */
function parseProcAddress(field: string): string | undefined {
  const [hex, portHex] = field.split(':');
  if (!hex || !portHex) return undefined;
  let v4: string;
  if (hex.length === 8) v4 = hex;
  else if (hex.length === 32 && hex.startsWith('0000000000000000FFFF0000')) v4 = hex.slice(24);
  else return undefined;
  const octets = [6, 4, 2, 0].map((i) => Number.parseInt(v4.slice(i, i + 2), 16));
  return `${octets.join('.')}:${Number.parseInt(portHex, 16)}`;
}

/** The inode of the socket on the *calling* side of an accepted loopback connection. */
async function callerInode(socket: Socket): Promise<string | undefined> {
  const { remoteAddress, remotePort, localAddress, localPort } = socket;
  if (!remoteAddress || !remotePort || !localAddress || !localPort) return undefined;
  const caller = `${remoteAddress.replace(/^::ffff:/, '')}:${remotePort}`;
  const callee = `${localAddress.replace(/^::ffff:/, '')}:${localPort}`;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n')) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      if (parseProcAddress(fields[1]!) === caller && parseProcAddress(fields[2]!) === callee)
        return fields[9];
    }
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
