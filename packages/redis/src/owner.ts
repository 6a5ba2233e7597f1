import { randomBytes } from 'node:crypto';

/** An unguessable token naming one grant (or one waiting acquire, which becomes that grant). */
export function newOwnerToken(): string {
  return randomBytes(16).toString('base64url');
}
