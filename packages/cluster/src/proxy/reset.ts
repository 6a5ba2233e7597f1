import type { Socket } from 'node:net';

/**
 * Aborts a connection with an RST when Node still can. A socket whose FIN is already queued (end()
 * called) cannot be reset: libuv answers EINVAL, and Node 20 then marks the handle closing without
 * ever closing it, so the process spins at exit on that handle. Such a socket is destroyed instead.
 */
export function resetSocket(socket: Socket): void {
  if (socket.destroyed) return;
  if (socket.writableEnded) socket.destroy();
  else socket.resetAndDestroy();
}
