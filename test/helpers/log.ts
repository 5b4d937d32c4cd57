// The server's log kept in memory, for tests that assert what it writes (levels, messages, and what
// never appears): a pino logger at info whose lines are read back as text or parsed.
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

export interface CapturedLog {
  logger: Logger;
  /** Everything written so far. */
  text(): string;
  /** Each line written so far, parsed. */
  lines(): Array<Record<string, unknown>>;
}

export function captureLog(): CapturedLog {
  let text = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return {
    logger: pino({ level: 'info' }, sink),
    text: () => text,
    lines: () => text.split('\n').filter((line) => line.trim()).map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}
