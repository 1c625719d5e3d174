import type { Worker } from 'node:worker_threads';
import type { ShardItem, ToShard } from './trace-shards.js';

/** Records handed over per message (and what is pending at the end of every batch read). */
const BATCH_RECORDS = 64;
/** Records that go by before a worker that was handed none is told how far the input has got. */
const IDLE_UPDATE_RECORDS = 256;
/** The smallest buffer lines are copied into for a worker. */
const BATCH_BYTES = 256 * 1024;

/**
 * What the reading thread has for one worker of `--jobs`: the records pending for its next
 * message (lines taken as bytes are copied into one buffer per message, transferred, not
 * copied again), and the text of each message it has not taken off its queue yet (each
 * message gets one reply), which bounds how far reading runs ahead of it.
 */
export class WorkerChannel {
  /** Characters of each message not yet taken off the worker's queue, oldest first. */
  private readonly _inFlight: number[] = [];
  /** Their sum. */
  queuedChars = 0;
  private _pending: ShardItem[] = [];
  private _pendingChars = 0;
  private _bytes: Buffer | undefined;
  private _usedBytes = 0;
  /** The record count the worker was last told about. */
  private _toldUpTo = 0;

  constructor(readonly worker: Worker) {}

  get hasPending(): boolean {
    return this._pending.length > 0;
  }

  /** Queues a record for the next message; sends it when the batch is full. `records`: how far the input has got. */
  queue(item: ShardItem, chars: number, records: number): void {
    this._pending.push(item);
    this._pendingChars += chars;
    if (this._pending.length >= BATCH_RECORDS) this.send(records);
  }

  /**
   * Sends what is pending; also an empty message to a worker with nothing to do that has not
   * learnt for a while how far the input has got, so its window closes its traces (and lets
   * their spans go) while the records go to the others.
   */
  flush(records: number): void {
    if (this._pending.length > 0 || records - this._toldUpTo >= IDLE_UPDATE_RECORDS) this.send(records);
  }

  send(records: number): void {
    const items = this._pending;
    this._pending = [];
    this._inFlight.push(this._pendingChars);
    this.queuedChars += this._pendingChars;
    this._pendingChars = 0;
    this._toldUpTo = records;
    const buffer = this._bytes;
    if (buffer === undefined || this._usedBytes === 0) {
      this.worker.postMessage({ kind: 'records', items, upTo: records } satisfies ToShard);
      return;
    }
    const bytes = new Uint8Array(buffer.buffer, buffer.byteOffset, this._usedBytes);
    this._bytes = undefined;
    this._usedBytes = 0;
    this.worker.postMessage({ kind: 'records', items, bytes, upTo: records } satisfies ToShard, [
      buffer.buffer as ArrayBuffer,
    ]);
  }

  /** Copies a line's bytes into the next message's buffer; returns its offset there. */
  copy(chunk: Buffer, start: number, end: number): number {
    const length = end - start;
    let buffer = this._bytes;
    const used = this._usedBytes;
    if (buffer === undefined || used + length > buffer.length) {
      // Its own ArrayBuffer (never node's shared pool), so it can be transferred.
      const grown = Buffer.from(new ArrayBuffer(Math.max(BATCH_BYTES, 2 * (used + length))));
      if (buffer !== undefined) buffer.copy(grown, 0, 0, used);
      buffer = grown;
      this._bytes = buffer;
    }
    chunk.copy(buffer, used, start, end);
    this._usedBytes = used + length;
    return used;
  }

  /** The worker took its oldest message off its queue (it replied with progress). */
  taken(): void {
    this.queuedChars -= this._inFlight.shift() ?? 0;
  }
}
