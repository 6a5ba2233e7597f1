import { connect } from 'node:net';

/** A decoded RESP2 reply: simple strings and bulk strings as strings, integers, nulls, arrays, errors as Error. */
export type RespValue = string | number | null | Error | RespValue[];

/** Parses one RESP2 value from `text` at `at`; undefined when the reply is not complete yet. */
function parse(text: string, at: number): { value: RespValue; end: number } | undefined {
  const lineEnd = text.indexOf('\r\n', at);
  if (lineEnd < 0) return undefined;
  const type = text[at];
  const line = text.slice(at + 1, lineEnd);
  const next = lineEnd + 2;
  switch (type) {
    case '+':
      return { value: line, end: next };
    case '-':
      return { value: new Error(line), end: next };
    case ':':
      return { value: Number(line), end: next };
    case '$': {
      const length = Number(line);
      if (length < 0) return { value: null, end: next };
      // Lengths are in bytes; the probes only read ASCII replies (INFO, CLUSTER NODES, addresses).
      if (text.length < next + length + 2) return undefined;
      return { value: text.slice(next, next + length), end: next + length + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return { value: null, end: next };
      const items: RespValue[] = [];
      let end = next;
      for (let i = 0; i < count; i++) {
        const item = parse(text, end);
        if (!item) return undefined;
        items.push(item.value);
        end = item.end;
      }
      return { value: items, end };
    }
    default:
      throw new Error(`not a RESP reply: ${JSON.stringify(text.slice(at, at + 40))}`);
  }
}

const encode = (args: readonly string[]) =>
  `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;

/**
 * Sends one command to a Redis server (or Sentinel) on a fresh connection and resolves with its reply; an error
 * reply resolves as an Error value (the caller decides), a connection failure or no reply in `timeoutMs` rejects.
 * The probes and the replication set-up use it so that @fencekit/cluster needs no Redis client library.
 */
export function redisCall(
  host: string,
  port: number,
  args: readonly string[],
  timeoutMs = 1000,
): Promise<RespValue> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    let reply = '';
    let settled = false;
    const finish = (error: Error | undefined, value?: RespValue) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve(value ?? null);
    };
    const timer = setTimeout(
      () => finish(new Error(`no reply to ${args[0]} from ${host}:${port} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    socket.setEncoding('latin1');
    socket.on('connect', () => socket.write(encode(args), 'latin1'));
    socket.on('data', (chunk: string) => {
      reply += chunk;
      try {
        const parsed = parse(reply, 0);
        if (parsed) finish(undefined, parsed.value);
      } catch (error) {
        finish(error as Error);
      }
    });
    socket.on('end', () => finish(new Error(`${host}:${port} closed before replying to ${args[0]}`)));
    socket.on('error', (error) => finish(error));
  });
}

/** Like `redisCall`, but an error reply rejects. */
export async function redisCommand(
  host: string,
  port: number,
  args: readonly string[],
  timeoutMs = 1000,
): Promise<RespValue> {
  const value = await redisCall(host, port, args, timeoutMs);
  if (value instanceof Error) throw new Error(`${args.join(' ')} on ${host}:${port}: ${value.message}`);
  return value;
}

/** `INFO <section>` as a map of its `key:value` lines. */
export async function redisInfo(
  host: string,
  port: number,
  section: string,
  timeoutMs = 1000,
): Promise<Map<string, string>> {
  const text = await redisCommand(host, port, ['INFO', section], timeoutMs);
  const fields = new Map<string, string>();
  for (const line of String(text).split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return fields;
}
