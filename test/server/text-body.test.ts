// run-tests: parallel
// The streaming readers of remove.bg's JSON and url-encoded bodies (server/input/text-body.ts) and
// the base64 decoder (server/input/base64-stream.ts) read what the whole-body parsers they
// replaced read: random bodies, sent over real HTTP in random pieces (a name, a value, an escape
// or a %XX cut anywhere), give the fields JSON.parse and URLSearchParams give; random base64 in
// random pieces, with line breaks and a data: prefix, gives Buffer.from's bytes; and what they
// refuse, they refuse wherever it is cut.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import http from 'node:http';
import net from 'node:net';
import type { Context } from 'koa';
import { Base64Decoder, Base64Error } from '../../server/input/base64-stream.js';
import { HttpError } from '../../server/errors.js';
import { readJsonFields, readUrlEncodedFields, type TextFieldRules } from '../../server/input/text-body.js';
import { random } from '../helpers/random.js';
import { sleep } from '../helpers/server.js';

const NAMES = ['size', 'tag', 'image_url', 'crop', 'roi', 'é_name'];
const RULES: TextFieldRules = { allowed: [...NAMES, 'image_file_b64', 'image_file'], fileOnly: ['image_file'], base64: { name: 'image_file_b64', maxBytes: 4096 }, maxValueBytes: 200 };

/** Cuts `body` into `count` pieces at random places. */
function pieces(body: Buffer, count: number, next: () => number): Buffer[] {
  const cuts = [...new Set(Array.from({ length: count - 1 }, () => Math.floor(next() * body.length)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const cut of [...cuts, body.length]) {
    out.push(body.subarray(from, cut));
    from = cut;
  }
  return out.filter((p) => p.length > 0);
}

type Outcome = { fields: Record<string, string>; decoded?: string } | { error: string };

/** A server whose one route reads the body with `read` and answers what it read. */
async function reader(read: typeof readJsonFields): Promise<{ port: number; close(): void }> {
  const server = http.createServer((req, res) => {
    const ctx = { req, res } as unknown as Context; // what the readers use of Koa's context
    read(ctx, RULES, { maxBodyBytes: 1 << 20, maxInputBytes: 1 << 20, timeoutMs: 10_000 }).then(
      ({ fields, decoded }) => res.end(JSON.stringify({ fields, ...(decoded ? { decoded: decoded.toString('hex') } : {}) })),
      (err: unknown) => res.end(JSON.stringify({ error: err instanceof HttpError ? err.code : err instanceof Base64Error ? `base64 ${err.reason}` : String(err) })),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as net.AddressInfo).port, close: () => server.close() };
}

/** Sends `body` in `parts`, each its own write a moment after the last, and parses the answer. */
function send(port: number, parts: Buffer[], total: number): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    let text = '';
    socket.on('data', (d) => (text += d.toString('utf8')));
    // A refusal may come before the whole body is written: the rest of it may meet a reset.
    socket.on('error', (err) => {
      if (!text) reject(err);
    });
    socket.on('close', () => resolve(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))));
    socket.on('connect', async () => {
      socket.write(`POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: ${total}\r\n\r\n`);
      for (const part of parts) {
        if (socket.destroyed) return;
        socket.write(part);
        await sleep(1);
      }
    });
  });
}

const TEXT = ['a', 'B', ' ', '+', '%', '=', '&', '%41', '%2B', '%3D', '%26', '%e2%82%ac', '%zz', '%4', 'é', '€', '\u{1F600}', '"', '\\', '\n'];

/** Random text of TEXT's pieces. */
const text = (next: () => number, most: number) => Array.from({ length: Math.floor(next() * most) }, () => TEXT[Math.floor(next() * TEXT.length)]!).join('');

/**
 * Sixty random bodies (`make`) sent in random pieces to a server reading them with `read`: each
 * read as `whole` reads it (the fields given and not blank).
 */
async function roundTrips(seed: number, read: typeof readJsonFields, make: (next: () => number) => Buffer, whole: (body: string) => Array<[string, unknown]>): Promise<void> {
  const next = random(seed);
  const server = await reader(read);
  try {
    for (let round = 0; round < 60; round++) {
      const body = make(next);
      const expected: Record<string, string> = {};
      for (const [name, value] of whole(body.toString())) if (value !== null && String(value).trim() !== '') expected[name] = String(value);
      const outcome = await send(server.port, pieces(body, 1 + Math.floor(next() * 12), next), body.length);
      assert.equal(outcome, { fields: expected }, `${body}`);
    }
  } finally {
    server.close();
  }
}

test('url-encoded bodies in random pieces read as URLSearchParams reads them whole', async () => {
  const make = (next: () => number) => {
    const pairs = NAMES.filter(() => next() < 0.6).map((name) => {
      const value = text(next, 12)
        .replace(/[&=]/g, (c) => (c === '&' ? '%26' : '%3D'))
        // Clients percent-encode what is not ASCII (Node's URLSearchParams misreads a raw é after a stray %).
        .replace(/[^\x00-\x7f]/gu, encodeURIComponent);
      return `${encodeURIComponent(name)}=${value}`;
    });
    return Buffer.from(pairs.join('&') + (next() < 0.3 ? '&' : ''));
  };
  await roundTrips(4101, readUrlEncodedFields, make, (body) => [...new URLSearchParams(body)]);
});

test('JSON bodies in random pieces read as JSON.parse reads them whole (scalars as text, null absent)', async () => {
  const make = (next: () => number) => {
    const object: Record<string, unknown> = {};
    for (const name of NAMES.filter(() => next() < 0.6)) {
      const kind = next();
      object[name] = kind < 0.6 ? text(next, 10) : kind < 0.75 ? Math.round((next() - 0.5) * 1e6) / 100 : kind < 0.9 ? next() < 0.5 : null;
    }
    const json = JSON.stringify(object, null, next() < 0.5 ? 2 : undefined);
    return Buffer.from(json.replace(/[é€]/g, (c) => (next() < 0.5 ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c)));
  };
  await roundTrips(4102, readJsonFields, make, (body) => Object.entries(JSON.parse(body)));
});

test('refusals are the same wherever the body is cut', async () => {
  const next = random(4103);
  const json = await reader(readJsonFields);
  const form = await reader(readUrlEncodedFields);
  const cases: Array<[{ port: number }, string, string]> = [
    [json, '{"size":"a","size":"b"}', 'invalid_field'],
    [json, '{"nope":1}', 'unknown_field'],
    [json, '{"image_file":"AAAA"}', 'invalid_field'],
    [json, '{"tag":{"a":1}}', 'invalid_field'],
    [json, '{"tag":["a"]}', 'invalid_field'],
    [json, `{"tag":"${'x'.repeat(201)}"}`, 'invalid_field'],
    [json, '["size"]', 'invalid_json'],
    [json, '{"size":"a"} x', 'invalid_json'],
    [json, '{"size":"a"', 'invalid_json'],
    [json, '{"image_file_b64":"AAA"}', 'base64 malformed'],
    [json, `{"image_file_b64":"${Buffer.alloc(4097).toString('base64')}"}`, 'base64 too_large'],
    [form, 'size=a&size=b', 'invalid_field'],
    [form, 'nope=1', 'unknown_field'],
    [form, `${'s'.repeat(40)}=1`, 'unknown_field'],
    [form, 'image_file=AAAA', 'invalid_field'],
    [form, `tag=${'%41'.repeat(201)}`, 'invalid_field'],
    [form, 'image_file_b64=AA%3D', 'base64 malformed'],
  ];
  try {
    for (const [server, text, code] of cases) {
      for (let round = 0; round < 4; round++) {
        const body = Buffer.from(text);
        assert.equal(await send(server.port, pieces(body, 1 + Math.floor(next() * 8), next), body.length), { error: code }, text);
      }
    }
  } finally {
    json.close();
    form.close();
  }
});

test('base64 in random pieces, with line breaks and a data: prefix, decodes to the bytes; malformed and oversize refused', () => {
  const next = random(4104);
  for (let round = 0; round < 200; round++) {
    const bytes = Buffer.from(Array.from({ length: Math.floor(next() * 300) }, () => Math.floor(next() * 256)));
    let text = bytes.toString('base64').replace(/(.{76})/g, next() < 0.5 ? '$1\r\n' : '$1\n');
    if (next() < 0.3) text = `data:image/png;base64,${text}`;
    const decoder = new Base64Decoder(300, next() < 0.5 ? undefined : Math.ceil((text.length * 3) / 4));
    for (const part of pieces(Buffer.from(text), 1 + Math.floor(next() * 10), next)) decoder.push(part.toString());
    assert.ok(decoder.end().equals(bytes), text);
  }
  // More than the caller said it could be (a wrong Content-Length) still decodes, up to the limit.
  const small = new Base64Decoder(1000, 3);
  small.push(Buffer.alloc(600, 7).toString('base64'));
  assert.ok(small.end().equals(Buffer.alloc(600, 7)));
  const refused = (text: string, max = 100) => {
    try {
      const decoder = new Base64Decoder(max);
      for (const ch of text) decoder.push(ch);
      decoder.end();
      return 'decoded';
    } catch (err) {
      return (err as Base64Error).reason;
    }
  };
  for (const bad of ['A', 'AB', 'ABC', 'A===', 'AB=A', 'AAAA=AAA', '====', 'AB==AAAA', 'AA!A', 'data:image/png;base64', ' data:x;base64,AAAA', 'data:x;base64,A'])
    assert.is(refused(bad), 'malformed', bad);
  for (const good of ['', 'AAAA', 'AB==', 'ABC=', 'data:image/png;base64,AAAA', 'AA\r\nAA']) assert.is(refused(good), 'decoded', good);
  assert.is(refused(Buffer.alloc(101).toString('base64')), 'too_large');
  assert.is(refused(Buffer.alloc(100).toString('base64')), 'decoded');
});

test.run();
