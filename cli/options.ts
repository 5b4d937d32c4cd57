// Option value parsers shared by the commands (commander turns their errors into a usage error).
import { InvalidArgumentError } from 'commander';

/** Parses a whole decimal number (no sign, no fraction); the range is checked by the library. */
export function parseInteger(name: string): (value: string) => number {
  return (value) => {
    if (!/^\d{1,9}$/.test(value)) throw new InvalidArgumentError(`${name} must be a whole number`);
    return Number(value);
  };
}

/** A positive whole number. */
export function parsePositive(name: string): (value: string) => number {
  const integer = parseInteger(name);
  return (value) => {
    const n = integer(value);
    if (n < 1) throw new InvalidArgumentError(`${name} must be at least 1`);
    return n;
  };
}
