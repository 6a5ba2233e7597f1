import { existsSync, statSync } from 'node:fs';
import { z } from 'zod';
import type { SshDeploy } from '../backends/types.js';

/** Whether the `:port` ending `hostPort` (if any) is a port number, 1 to 65535. */
export function portInRange(hostPort: string): boolean {
  const port = /:(\d+)$/.exec(hostPort)?.[1];
  return port === undefined || (Number(port) >= 1 && Number(port) <= 65_535);
}

/**
 * `--nodes`: machines as `host` or `host:port` (the ssh port), a name or an IPv4 address. @fencekit/cluster checks
 * each again when it connects; this refuses what cannot be a node list at all, before anything starts.
 */
export const nodeList = z
  .union([z.string(), z.array(z.string())])
  .transform((value) => (typeof value === 'string' ? value.split(',') : value).map((s) => s.trim()))
  .pipe(
    z
      .array(
        z
          .string()
          .regex(/^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::\d{1,5})?$/, {
            error: 'host or host:port (a name or IPv4 address; no user, scheme or path)',
          })
          .refine(portInRange, { error: 'the ssh port must be from 1 to 65535' }),
      )
      .min(1, { error: 'at least one node' })
      .max(7, { error: 'at most 7 nodes' })
      .refine((nodes) => new Set(nodes.map((n) => n.split(':')[0])).size === nodes.length, {
        error: 'each host once (every node runs its servers on the standard ports)',
      }),
  );

/** `--ssh-key`: a path. Its contents are never read here, and never printed anywhere. */
export const keyPath = z
  .string()
  .min(1)
  .refine((path) => existsSync(path) && statSync(path).isFile(), {
    error: 'no such key file (give the path of a private key; its contents are never printed)',
  });

export const sshUser = z
  .string()
  .regex(/^[a-z_][a-z0-9_.-]{0,31}$/i, { error: 'a user name (letters, digits, _ . -)' });
/** `--ssh-port`: decimal digits only (no `0x16`, ` 22 `, `1e3`), 1 to 65535. */
export const sshPort = z
  .union([z.number(), z.string().regex(/^\d{1,5}$/, { error: 'a port number: decimal digits, 1 to 65535' })])
  .transform(Number)
  .pipe(
    z
      .number()
      .int()
      .min(1, { error: 'a port from 1 to 65535' })
      .max(65_535, { error: 'a port from 1 to 65535' }),
  );
export const sshHostKeys = z.enum(['strict', 'accept-new'], {
  error: () => "'strict' (the default: host keys must be known) or 'accept-new'",
});

/** The run options' ssh fields, turned into what the deployment takes. */
export function sshDeploy(
  options: {
    nodes?: readonly string[] | undefined;
    sshUser?: string | undefined;
    sshKey?: string | undefined;
    sshPort?: number | undefined;
    sshHostKeys?: 'strict' | 'accept-new' | undefined;
    sshKnownHosts?: string | undefined;
  },
  collectDir?: string,
): SshDeploy | undefined {
  if (!options.nodes) return undefined;
  return {
    nodes: options.nodes,
    ...(options.sshUser ? { user: options.sshUser } : {}),
    ...(options.sshKey ? { keyPath: options.sshKey } : {}),
    ...(options.sshPort ? { port: options.sshPort } : {}),
    ...(options.sshHostKeys ? { hostKeys: options.sshHostKeys } : {}),
    ...(options.sshKnownHosts ? { knownHostsFile: options.sshKnownHosts } : {}),
    ...(collectDir ? { collectDir } : {}),
  };
}
