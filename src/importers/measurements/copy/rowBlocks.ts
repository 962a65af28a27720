/**
 * Binary COPY rows gathered into large blocks, so that COPY gets few large writes rather than one per
 * row. A row is written in place at the offset `reserve` returns, through `view` (a DataView's
 * big-endian setters cost less than a Buffer's write methods); the rows written since the last `take`
 * are then handed over as slices of the blocks, without copying.
 */

const BLOCK_BYTES = 1 << 20;

export class RowBlocks {
  /** The block rows are being written to. */
  block = Buffer.allocUnsafe(BLOCK_BYTES);
  /** `block`'s bytes. */
  view = viewOf(this.block);
  private used = 0;
  /** Where the block's rows not yet taken start. */
  private taken = 0;
  /** Earlier blocks' rows not yet taken. */
  private full: Buffer[] = [];

  /** Room for a row of `bytes` in `block`; returns where it starts. */
  reserve(bytes: number): number {
    if (this.used + bytes > BLOCK_BYTES) {
      this.full.push(this.block.subarray(this.taken, this.used));
      this.block = Buffer.allocUnsafe(BLOCK_BYTES);
      this.view = viewOf(this.block);
      this.used = 0;
      this.taken = 0;
    }
    const at = this.used;
    this.used += bytes;
    return at;
  }

  /** The rows written since the last call; the rest of the block stays ours to fill. */
  take(): Buffer[] {
    const rows = this.full;
    if (this.used > this.taken) rows.push(this.block.subarray(this.taken, this.used));
    this.full = [];
    this.taken = this.used;
    return rows;
  }
}

const viewOf = (block: Buffer) => new DataView(block.buffer, block.byteOffset, block.byteLength);
