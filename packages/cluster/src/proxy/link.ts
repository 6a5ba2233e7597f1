import type { Socket } from 'node:net';
import { resetSocket } from './reset.js';

/** What the toxics of one direction do to each chunk, folded into numbers. */
export interface LinkEffects {
  /** Base delay added to every chunk. */
  readonly latencyMs: number;
  /** Uniform ± spread around the base delay. */
  readonly jitterMs: number;
  /** Throughput limit in bytes per millisecond; 0 = unlimited. */
  readonly bytesPerMs: number;
  /** Data is discarded (Toxiproxy's timeout toxic). */
  readonly dropping: boolean;
  /** Extra delay before a close (FIN) is passed on. */
  readonly slowCloseMs: number;
}

export const NO_EFFECTS: LinkEffects = {
  latencyMs: 0,
  jitterMs: 0,
  bytesPerMs: 0,
  dropping: false,
  slowCloseMs: 0,
};

type Item =
  | { readonly kind: 'data'; readonly chunk: Buffer; readonly at: number }
  | { readonly kind: 'end' | 'reset'; readonly at: number };

/** Above this much queued data the source is paused, as TCP's window would close. */
const HIGH_WATER = 1 << 20;

/**
 * One direction of a proxied connection. Chunks are released in order, each no earlier than its arrival plus the
 * toxics' delay. While stalled (a cut link) nothing is read or written: the bytes wait in the kernel's buffers,
 * as they would behind a firewall that drops packets while TCP keeps retransmitting, and flow again on heal.
 */
export class Link {
  private readonly queue: Item[] = [];
  private queuedBytes = 0;
  private lastAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private destination: Socket | undefined;
  private stalled = false;
  private draining = false;

  constructor(
    private readonly source: Socket,
    private readonly effects: () => LinkEffects,
    /** Rewrites the first chunk (a handshake that names an address the server must not use directly). */
    private rewriteFirst?: (chunk: Buffer) => Buffer,
  ) {
    source.on('data', (chunk: Buffer) => this.onData(chunk));
    source.on('end', () => this.push({ kind: 'end', at: this.releaseAt(0, this.effects().slowCloseMs) }));
    source.on('close', (hadError: boolean) => {
      if (hadError) this.push({ kind: 'reset', at: this.releaseAt(0, 0) });
    });
  }

  /** Where the bytes go; until then they queue. */
  attach(destination: Socket): void {
    this.destination = destination;
    this.pump();
  }

  setStalled(stalled: boolean): void {
    if (this.stalled === stalled) return;
    this.stalled = stalled;
    if (stalled) {
      clearTimeout(this.timer);
      this.source.pause();
    } else {
      this.pump();
    }
  }

  get isStalled(): boolean {
    return this.stalled;
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.queue.length = 0;
  }

  private onData(chunk: Buffer): void {
    if (this.rewriteFirst) {
      chunk = this.rewriteFirst(chunk);
      this.rewriteFirst = undefined;
    }
    const effects = this.effects();
    if (effects.dropping) return;
    const transmitMs = effects.bytesPerMs > 0 ? chunk.length / effects.bytesPerMs : 0;
    const jitter = effects.jitterMs > 0 ? (Math.random() * 2 - 1) * effects.jitterMs : 0;
    this.push({
      kind: 'data',
      chunk,
      at: this.releaseAt(Math.max(0, effects.latencyMs + jitter), transmitMs),
    });
  }

  /** Order is kept: an item never overtakes the one before it; bandwidth time adds after the previous release. */
  private releaseAt(delayMs: number, extraMs: number): number {
    const at = Math.max(performance.now() + delayMs, this.lastAt) + extraMs;
    this.lastAt = at;
    return at;
  }

  private push(item: Item): void {
    this.queue.push(item);
    if (item.kind === 'data') {
      this.queuedBytes += item.chunk.length;
      if (this.queuedBytes > HIGH_WATER) this.source.pause();
    }
    this.pump();
  }

  private pump(): void {
    const destination = this.destination;
    if (!destination || this.stalled || this.draining || destination.destroyed) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    const now = performance.now();
    while (this.queue.length > 0) {
      const item = this.queue[0]!;
      if (item.at > now) {
        this.timer = setTimeout(() => this.pump(), Math.ceil(item.at - now));
        break;
      }
      this.queue.shift();
      if (item.kind === 'data') {
        this.queuedBytes -= item.chunk.length;
        if (!destination.write(item.chunk)) {
          this.draining = true;
          destination.once('drain', () => {
            this.draining = false;
            this.pump();
          });
          return;
        }
      } else if (item.kind === 'end') {
        destination.end();
      } else {
        resetSocket(destination);
        return;
      }
    }
    if (this.queuedBytes <= HIGH_WATER && !this.source.destroyed) this.source.resume();
  }
}
