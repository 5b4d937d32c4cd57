// A base64 image decoded as its text arrives (remove.bg's image_file_b64, docs/api.md "The
// remove.bg-compatible API"): the text is never held whole, only its decoded bytes, and a text
// that is not base64 or decodes past the limit is refused at the step (of STEP_CHARS) that shows it.

/** Why a base64 text was refused. */
export class Base64Error extends Error {
  constructor(
    readonly reason: 'malformed' | 'too_large',
    message: string,
  ) {
    super(message);
    this.name = 'Base64Error';
  }
}

/** What browsers' FileReader puts before the base64 (`data:image/png;base64,`). */
const DATA_PREFIX = /^data:[^,;]{0,100};base64,/;
/** The longest text that may still become a data: prefix. */
const MAX_PREFIX_CHARS = 'data:'.length + 100 + ';base64,'.length;
const WHITESPACE = /[\r\n\t ]+/g;
const ALPHABET = /^[A-Za-z0-9+/]*={0,2}$/;
const PADDING = /^=*$/;
/** Text decoded per step, so a long chunk is never copied whole. */
const STEP_CHARS = 64 * 1024;

/**
 * Standard base64 (padded; line breaks, tabs and spaces skipped; a leading `data:...;base64,`
 * taken), decoded to at most `maxBytes`. push() the text in any pieces, then end().
 */
export class Base64Decoder {
  private head: string | undefined = '';
  /** Text received and not yet decoded: decoded a step at a time, not per (possibly tiny) piece. */
  private queued: string[] = [];
  private queuedChars = 0;
  /** Base64 characters not yet decoded (fewer than four). */
  private pending = '';
  private padding = 0;
  /**
   * Where the bytes are decoded to, allocated once at the most they can be: written a step at a
   * time, so its pages are touched as the text arrives, never copied whole at the end.
   */
  private target: Buffer | undefined;
  private decoded = 0;

  /** `mostBytes`: what the caller knows the text cannot exceed decoded (from a Content-Length). */
  constructor(
    private readonly maxBytes: number,
    private readonly mostBytes = maxBytes,
  ) {}

  push(text: string): void {
    if (this.head !== undefined) {
      // The start may be a data: prefix: held until it is known whether it is one.
      this.head += text;
      if (this.head.length < MAX_PREFIX_CHARS && 'data:'.startsWith(this.head.slice(0, 5)) && !this.head.includes(',')) return;
      text = this.head.replace(DATA_PREFIX, '');
      this.head = undefined;
    }
    if (text.length >= STEP_CHARS) {
      this.flush();
      for (let at = 0; at < text.length; at += STEP_CHARS) this.decode(text.slice(at, at + STEP_CHARS));
      return;
    }
    this.queued.push(text);
    this.queuedChars += text.length;
    if (this.queuedChars >= STEP_CHARS) this.flush();
  }

  private flush(): void {
    if (this.queuedChars === 0) return;
    const text = this.queued.join('');
    this.queued = [];
    this.queuedChars = 0;
    this.decode(text);
  }

  /** The decoded bytes; throws when the text ended inside a group of four. */
  end(): Buffer {
    if (this.head !== undefined) {
      const head = this.head.replace(DATA_PREFIX, '');
      this.head = undefined;
      this.decode(head);
    }
    this.flush();
    if (this.pending.length !== 0) throw malformed();
    return this.target ? this.target.subarray(0, this.decoded) : Buffer.alloc(0);
  }

  private decode(piece: string): void {
    const text = piece.replace(WHITESPACE, '');
    if (text === '') return;
    if (this.padding > 0 ? !PADDING.test(text) : !ALPHABET.test(text)) throw malformed();
    const equals = text.length - text.replace(/=+$/, '').length;
    this.padding += equals;
    if (this.padding > 2) throw malformed();
    const all = this.pending + text;
    const whole = all.length - (all.length % 4);
    this.pending = all.slice(whole);
    if (whole === 0) return;
    const quads = all.slice(0, whole);
    const size = Buffer.byteLength(quads, 'base64');
    if (this.decoded + size > this.maxBytes) throw new Base64Error('too_large', `the decoded image exceeds the limit of ${this.maxBytes} bytes`);
    this.target ??= Buffer.allocUnsafeSlow(Math.min(this.maxBytes, Math.max(this.mostBytes, size)));
    if (this.decoded + size > this.target.length) {
      // More than the caller expected (never with a true Content-Length): room up to the limit.
      const larger = Buffer.allocUnsafeSlow(this.maxBytes);
      this.target.copy(larger, 0, 0, this.decoded);
      this.target = larger;
    }
    this.decoded += this.target.write(quads, this.decoded, 'base64');
  }
}

const malformed = () => new Base64Error('malformed', 'must be a base64-encoded image (A-Z, a-z, 0-9, + and /, padded with =)');
