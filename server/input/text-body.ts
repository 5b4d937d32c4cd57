// A body of named text fields, application/json or application/x-www-form-urlencoded (the
// remove.bg routes' second and third kind of body), read as it streams: each field's name is
// checked as soon as it ends (unknown, repeated, or a file field sent as text), a value that is
// not a string, a number or a boolean is refused where it starts, every value is bounded, and the
// one base64 field is decoded as it arrives. Nothing is built that the checks have not passed, so
// a hostile body costs a few chunks of memory and a chunk's worth of work at a time, whatever
// its size. JSON is tokenized by stream-json; the url-encoded grammar is the WHATWG one that
// URLSearchParams parses (`+` a space, `%XX` a byte, a stray `%` itself).
import { StringDecoder } from 'node:string_decoder';
import type { Context } from 'koa';
import { jsonParser, type Token } from 'stream-json/core/parser.js';
import { HttpError } from '../errors.js';
import { Base64Decoder } from './base64-stream.js';
import { receiveBody, type BodyBounds } from './body.js';

export interface TextFieldRules {
  /** The names the endpoint takes. */
  allowed: readonly string[];
  /** Names that may only be file parts of a multipart body: refused here. */
  fileOnly: readonly string[];
  /** The field decoded from base64 as it arrives, and its decoded limit. */
  base64: { name: string; maxBytes: number };
  /** The most bytes any other value may have. */
  maxValueBytes: number;
}

export interface TextFields {
  /** The values given, each once; an empty (or blank) value counts as absent. */
  fields: Record<string, string>;
  /** The base64 field's bytes, when it was given and not empty. */
  decoded?: Buffer;
}

/** Pieces of a chunk handled at a time: the event loop is never held for more than one. */
const PIECE_BYTES = 64 * 1024;

const fieldError = (message: string, path?: string) => new HttpError(400, 'invalid_field', message, { path, closeConnection: true });

/** One name-value pair after another, from either grammar: the checks and the values. */
class FieldCollector {
  private readonly result: TextFields = { fields: {} };
  private readonly seen = new Set<string>();
  /** The longest allowed name (they are ASCII: as many bytes as characters). */
  readonly longestName: number;
  private name = '';
  private value: string[] = [];
  private valueBytes = 0;
  private decoder: Base64Decoder | undefined;

  /** `bodyBytes`: the declared Content-Length, the most a base64 value can decode from (a quarter less). */
  constructor(
    private readonly rules: TextFieldRules,
    private readonly bodyBytes: number | undefined,
  ) {
    this.longestName = Math.max(...rules.allowed.map((n) => n.length));
  }

  /** A piece of the current name; a name longer than every allowed one is unknown already. */
  namePiece(text: string): void {
    this.name += text;
    if (this.name.length > this.longestName) throw this.unknown(this.name);
  }

  /** The name is whole: checked before its value is read. */
  nameEnd(): void {
    const { name, rules } = this;
    if (!rules.allowed.includes(name)) throw this.unknown(name);
    if (rules.fileOnly.includes(name)) throw fieldError(`${name} must be a file part of a multipart/form-data body`, name);
    if (this.seen.has(name)) throw fieldError(`${name} is given more than once`, name);
    this.seen.add(name);
    if (name === rules.base64.name) this.decoder = new Base64Decoder(rules.base64.maxBytes, this.bodyBytes === undefined ? undefined : Math.ceil((this.bodyBytes * 3) / 4));
  }

  valuePiece(text: string): void {
    if (this.decoder) {
      this.decoder.push(text);
      return;
    }
    this.valueBytes += Buffer.byteLength(text);
    if (this.valueBytes > this.rules.maxValueBytes) throw fieldError(`${this.name} is longer than ${this.rules.maxValueBytes} bytes`, this.name);
    this.value.push(text);
  }

  /** The value is whole: text, a JSON number (as JavaScript writes it: `5.0` is `5`) or JSON's null (absent). */
  valueEnd(kind: 'text' | 'number' | 'null' = 'text'): void {
    if (this.decoder) {
      const bytes = this.decoder.end();
      if (bytes.length > 0) this.result.decoded = bytes;
      this.decoder = undefined;
    } else {
      const joined = this.value.join('');
      const text = kind === 'number' ? String(Number(joined)) : joined;
      if (kind !== 'null' && text.trim() !== '') this.result.fields[this.name] = text;
    }
    this.name = '';
    this.value = [];
    this.valueBytes = 0;
  }

  get fields(): TextFields {
    return this.result;
  }

  get current(): string {
    return this.name;
  }

  /** A name no allowed one can be (quoted at most as long as the longest allowed). */
  unknown(name: string): HttpError {
    const shown = name.length > this.longestName ? `${name.slice(0, this.longestName)}...` : name;
    return new HttpError(400, 'unknown_field', `unknown parameter "${shown}" (this endpoint takes ${this.rules.allowed.join(', ')})`, { path: shown, closeConnection: true });
  }
}

function declaredLength(ctx: Context): number | undefined {
  const declared = Number(ctx.req.headers['content-length']);
  return Number.isSafeInteger(declared) && declared >= 0 ? declared : undefined;
}

/** Feeds the body to `parse` in pieces as it arrives, within `bounds`; `end` gives the result. */
function streamBody(ctx: Context, bounds: BodyBounds, parse: (piece: Buffer) => void, end: () => TextFields): Promise<TextFields> {
  const req = ctx.req;
  return receiveBody<TextFields>(ctx, bounds, (done) => {
    const onData = (chunk: Buffer) => {
      try {
        for (let at = 0; at < chunk.length; at += PIECE_BYTES) parse(chunk.subarray(at, at + PIECE_BYTES));
      } catch (err) {
        done(err);
      }
    };
    const onEnd = () => {
      try {
        done(undefined, end());
      } catch (err) {
        done(err);
      }
    };
    const onError = (err: Error) => done(new HttpError(400, 'client_closed', 'the request body could not be read', { cause: err }));
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
    return () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
  });
}

const invalidJson = (message: string) => new HttpError(400, 'invalid_json', `the body is not valid JSON: ${message}`, { closeConnection: true });

/** An application/json body: one object whose values are strings, numbers, booleans or null. */
export function readJsonFields(ctx: Context, rules: TextFieldRules, bounds: BodyBounds): Promise<TextFields> {
  const fields = new FieldCollector(rules, declaredLength(ctx));
  const text = new StringDecoder('utf8');
  // Keys, strings and numbers arrive in pieces (never whole: a long one is never built).
  const tokenize = jsonParser({ packValues: false });
  let started = false;
  let ended = false;
  let inKey = false;

  // Every value at the top level is a scalar, so the object never nests: the one endObject is its end.
  const visit = (token: Token) => {
    if (!started) {
      if (token.name !== 'startObject') throw new HttpError(400, 'invalid_json', 'the body must be a JSON object of parameters', { closeConnection: true });
      started = true;
      return;
    }
    switch (token.name) {
      case 'startKey':
        inKey = true;
        return;
      case 'stringChunk':
        if (inKey) fields.namePiece(token.value);
        else fields.valuePiece(token.value);
        return;
      case 'endKey':
        inKey = false;
        fields.nameEnd();
        return;
      case 'numberChunk':
        fields.valuePiece(token.value);
        return;
      case 'endString':
        fields.valueEnd();
        return;
      case 'endNumber':
        fields.valueEnd('number');
        return;
      case 'trueValue':
      case 'falseValue':
        fields.valuePiece(String(token.value));
        fields.valueEnd();
        return;
      case 'nullValue':
        fields.valueEnd('null');
        return;
      case 'startObject':
      case 'startArray':
        throw fieldError(`${fields.current} must be a string, a number or a boolean`, fields.current);
      case 'endObject':
        ended = true;
        return;
      default:
        return;
    }
  };
  const feed = (input: string) => {
    if (input === '') return;
    let tokens: unknown;
    try {
      tokens = tokenize(input);
    } catch (err) {
      throw invalidJson((err as Error).message);
    }
    // A list of tokens (stream-chain's many()), or a marker when the piece made none.
    const list = (tokens as { values?: Token[] }).values;
    if (list) for (const token of list) visit(token);
  };
  return streamBody(
    ctx,
    bounds,
    (piece) => feed(text.write(piece)),
    () => {
      feed(text.end());
      // The tokenizer refuses anything but whitespace after the object as it arrives: once the
      // object is closed the body is whole (no end-of-input flush is needed).
      if (!ended) throw invalidJson('the body ended before the object did');
      return fields.fields;
    },
  );
}

const PLUS = 0x2b;
const PERCENT = 0x25;
const AMPERSAND = 0x26;
const EQUALS = 0x3d;

function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  const lower = byte | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/**
 * Percent-decoding across pieces: `+` a space, `%XX` its byte, a `%` not followed by two hex
 * digits itself (as URLSearchParams). A `%` near a piece's end waits for the next piece.
 */
class PercentDecoder {
  private held: number[] = [];

  push(bytes: Buffer): Buffer {
    const input = this.held.length ? Buffer.concat([Buffer.from(this.held), bytes]) : bytes;
    this.held = [];
    const out = Buffer.allocUnsafe(input.length);
    let n = 0;
    for (let i = 0; i < input.length; i++) {
      const byte = input[i]!;
      if (byte === PLUS) out[n++] = 0x20;
      else if (byte !== PERCENT) out[n++] = byte;
      else if (i + 2 >= input.length) {
        this.held = [...input.subarray(i)];
        break;
      } else {
        const high = hexValue(input[i + 1]!);
        const low = hexValue(input[i + 2]!);
        if (high < 0 || low < 0) out[n++] = byte;
        else {
          out[n++] = high * 16 + low;
          i += 2;
        }
      }
    }
    return out.subarray(0, n);
  }

  /** What was held: a `%` with fewer than two characters after it is itself (and a `+` after it a space). */
  end(): Buffer {
    const rest = Buffer.from(this.held.map((byte) => (byte === PLUS ? 0x20 : byte)));
    this.held = [];
    return rest;
  }
}

/** An application/x-www-form-urlencoded body: `name=value` pairs joined by `&`. */
export function readUrlEncodedFields(ctx: Context, rules: TextFieldRules, bounds: BodyBounds): Promise<TextFields> {
  const fields = new FieldCollector(rules, declaredLength(ctx));
  const percent = new PercentDecoder();
  // Names are short (bounded by the collector); a value's bytes are decoded text only at its end,
  // except the base64 field's, which are ASCII and go on at once.
  let inName = true;
  let pairEmpty = true;
  let name: Buffer[] = [];
  let nameBytes = 0;
  let utf8 = new StringDecoder('utf8');

  const namePiece = (raw: Buffer) => {
    const bytes = percent.push(raw);
    nameBytes += bytes.length;
    name.push(bytes);
    if (nameBytes > fields.longestName) throw fields.unknown(Buffer.concat(name).toString('utf8'));
  };
  const nameEnd = () => {
    const bytes = Buffer.concat([...name, percent.end()]);
    fields.namePiece(bytes.toString('utf8'));
    fields.nameEnd();
    name = [];
    nameBytes = 0;
    utf8 = new StringDecoder(fields.current === rules.base64.name ? 'latin1' : 'utf8');
  };
  const valuePiece = (raw: Buffer) => {
    const text = utf8.write(percent.push(raw));
    if (text !== '') fields.valuePiece(text);
  };
  const valueEnd = () => {
    const text = utf8.write(percent.end()) + utf8.end();
    if (text !== '') fields.valuePiece(text);
    fields.valueEnd();
  };
  const pairEnd = () => {
    if (inName) {
      if (!pairEmpty) {
        nameEnd();
        valueEnd();
      }
    } else valueEnd();
    inName = true;
    pairEmpty = true;
  };

  const parse = (piece: Buffer) => {
    let from = 0;
    while (from < piece.length) {
      const amp = piece.indexOf(AMPERSAND, from);
      const stop = amp < 0 ? piece.length : amp;
      if (stop > from) {
        pairEmpty = false;
        const part = piece.subarray(from, stop);
        const eq = inName ? part.indexOf(EQUALS) : -1;
        if (!inName) valuePiece(part);
        else if (eq < 0) namePiece(part);
        else {
          namePiece(part.subarray(0, eq));
          nameEnd();
          inName = false;
          valuePiece(part.subarray(eq + 1));
        }
      }
      if (amp < 0) return;
      pairEnd();
      from = amp + 1;
    }
  };
  return streamBody(ctx, bounds, parse, () => {
    pairEnd();
    return fields.fields;
  });
}
