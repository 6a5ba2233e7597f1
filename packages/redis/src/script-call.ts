import { createHash } from 'node:crypto';
import { monotonicNow } from '@fencekit/core';
import { Command } from 'ioredis';
import type { RedisClient } from './deployment.js';

/** A Lua script as the lock commands send it: by SHA, with its source at hand for NOSCRIPT. */
export class LuaScript {
  readonly sha: string;

  constructor(
    readonly lua: string,
    readonly numberOfKeys: number,
  ) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }
}

/**
 * One timer bounding every command in flight on a connection, instead of ioredis' `commandTimeout`
 * (a timer per command, armed and cleared around each round trip: about 7 µs of client CPU per
 * command here, a tenth of an uncontended acquire + release). Commands share one timeout, so the
 * oldest in flight is always the first to run out: the timer only ever looks at the head.
 *
 * The commands in flight are a plain queue (two arrays, a head and a tail index), not a Map: a
 * Map keyed by the command hashes it on every watch and settle, which cost 2-3 µs of client CPU
 * per uncontended acquire + release in place (against watch and settle doing nothing; this queue
 * costs about half of that). One connection answers in send order, so a command settles at the
 * head of the queue, found at once; any other position is found by a scan from the head (rare:
 * pipelined commands failing together, a command the timer already failed).
 */
export class CommandDeadlines {
  /**
   * Slots `#head` to `#tail` - 1 are in flight, in send order = deadline order; a settled command's
   * slot is cleared to undefined. Slots are reused once the queue empties, so the arrays only grow
   * to the most commands ever in flight at once.
   */
  readonly #commands: (Command | undefined)[] = [];
  readonly #deadlines: number[] = [];
  #head = 0;
  #tail = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(readonly timeoutMs: number) {}

  watch(command: Command): void {
    this.#commands[this.#tail] = command;
    this.#deadlines[this.#tail] = monotonicNow() + this.timeoutMs;
    this.#tail++;
    // Armed once and re-armed from the head when it fires, not per command.
    if (this.#timer === undefined) this.#arm(this.timeoutMs);
  }

  settled(command: Command): void {
    const commands = this.#commands;
    let at = this.#head;
    while (at < this.#tail && commands[at] !== command) at++;
    if (at === this.#tail) return;
    commands[at] = undefined;
    if (at === this.#head) this.#dropSettledHead();
  }

  /** Stops the timer (commands still in flight are settled by the connection closing). */
  close(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Moves the head past settled commands; an empty queue starts over at slot 0. */
  #dropSettledHead(): void {
    const commands = this.#commands;
    while (this.#head < this.#tail && commands[this.#head] === undefined) this.#head++;
    if (this.#head === this.#tail) {
      this.#head = 0;
      this.#tail = 0;
    } else if (this.#head >= 1024 && this.#head * 2 >= this.#tail) {
      // A backlog that never empties: move it to the front now and then (amortised O(1)).
      const live = this.#tail - this.#head;
      commands.copyWithin(0, this.#head, this.#tail);
      this.#deadlines.copyWithin(0, this.#head, this.#tail);
      commands.fill(undefined, live, this.#tail);
      this.#head = 0;
      this.#tail = live;
    }
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(this.#expire, Math.max(1, ms));
  }

  readonly #expire = (): void => {
    this.#timer = undefined;
    const now = monotonicNow();
    const commands = this.#commands;
    for (let i = this.#head; i < this.#tail; i++) {
      const command = commands[i];
      if (command === undefined) continue;
      const deadline = this.#deadlines[i] as number;
      if (deadline > now) {
        this.#dropSettledHead();
        this.#arm(deadline - now);
        return;
      }
      commands[i] = undefined;
      // The same rejection ioredis' own commandTimeout gives; a late reply is then ignored.
      command.reject(new Error('Command timed out'));
    }
    this.#dropSettledHead();
  };
}

/**
 * Runs `script` by EVALSHA, and by EVAL when the server answers NOSCRIPT (after a restart or
 * SCRIPT FLUSH; EVAL caches it again). NOSCRIPT means nothing ran, so sending again is safe. Built
 * as a plain ioredis `Command`, which skips the wrapper `defineCommand` puts around every call.
 */
export async function callScript(
  redis: RedisClient,
  deadlines: CommandDeadlines | undefined,
  script: LuaScript,
  args: (string | number)[],
): Promise<unknown> {
  let command = scriptCommand(redis, 'evalsha', script.sha, script.numberOfKeys, args);
  deadlines?.watch(command);
  try {
    return await redis.sendCommand(command);
  } catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
    deadlines?.settled(command);
    command = scriptCommand(redis, 'eval', script.lua, script.numberOfKeys, args);
    deadlines?.watch(command);
    return await redis.sendCommand(command);
  } finally {
    deadlines?.settled(command);
  }
}

/** The options of every script command on a connection without a key prefix (ioredis only reads them). */
const UNPREFIXED = { replyEncoding: 'utf8' } as const;

function scriptCommand(
  redis: RedisClient,
  name: 'eval' | 'evalsha',
  script: string,
  numberOfKeys: number,
  args: (string | number)[],
): Command {
  const { keyPrefix } = redis.options;
  // The caller's instance may come from another copy of ioredis than the one imported here: its own
  // Command class (ioredis sets `Redis.Command`) builds commands exactly as that connection expects.
  const CommandOfConnection = (redis.constructor as { Command?: typeof Command }).Command ?? Command;
  // ioredis flattens nested arguments into the command itself: one copy of `args`, not two.
  return new CommandOfConnection(
    name,
    [script, numberOfKeys, args],
    // As defineCommand did: a caller's instance with a keyPrefix prefixes the script's keys too.
    keyPrefix ? { replyEncoding: 'utf8', keyPrefix } : UNPREFIXED,
  );
}
