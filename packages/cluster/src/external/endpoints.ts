import { InvalidArgumentError } from '@fencekit/core';

/** One server of an external cluster as the user named it, split for the proxy and the probes. */
export interface ExternalEndpoint {
  /** As given: 'host:port' or '[v6]:port'. */
  readonly text: string;
  /** The host to connect to (an IPv6 address without its brackets). */
  readonly host: string;
  readonly port: number;
}

/** A DNS name (letters, digits, dots, hyphens), a dotted IPv4 address, or a bracketed IPv6 address. */
const HOST_PORT = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)):(\d{1,5})$/;

/**
 * Checks a user's endpoint list (it reaches sockets and report pages): each entry `host:port` with a plain host
 * name or address and a port in 1..65535, no scheme, path, credentials or duplicates.
 */
export function parseEndpoints(field: string, endpoints: unknown, max: number): ExternalEndpoint[] {
  if (!Array.isArray(endpoints) || endpoints.length === 0 || endpoints.length > max) {
    throw new InvalidArgumentError(field, endpoints, `a list of 1 to ${max} 'host:port' endpoints`);
  }
  const seen = new Set<string>();
  return endpoints.map((entry: unknown) => {
    const match = typeof entry === 'string' ? HOST_PORT.exec(entry) : null;
    const port = Number(match?.[3]);
    if (!match || !(port >= 1 && port <= 65_535)) {
      throw new InvalidArgumentError(
        field,
        entry,
        "'host:port' (a host name, IPv4 or [IPv6] address; port 1-65535)",
      );
    }
    const text = entry as string;
    if (seen.has(text.toLowerCase())) throw new InvalidArgumentError(field, entry, 'each endpoint once');
    seen.add(text.toLowerCase());
    return { text, host: (match[1] ?? match[2]) as string, port };
  });
}
