// Texts built to make a parser work hard (the shapes that make backtracking patterns quadratic or
// worse): long digit runs inside every colour function, nested parentheses, many commas, long
// runs of spaces. Shared by the validation tests (test/server/redos.test.ts) and the validation
// bench (bench/validation.ts).
import fc from 'fast-check';

export const COLOUR_FUNCTIONS = ['rgb', 'rgba', 'hsl', 'hsla', 'hwb', 'lab', 'lch', 'oklab', 'oklch', 'color', 'RGB', 'device-cmyk'];

/** One adversarial text of about `length` characters (never a valid value of any field). */
export function adversarialText(shape: number, fn: string, length: number): string {
  const n = Math.max(4, length);
  switch (shape % 8) {
    case 0: // the attack: a digit run inside a colour function
      return `${fn}(${'1'.repeat(n)}`.slice(0, n) + ')';
    case 1: // digits and a dot, no closing parenthesis
      return `${fn}(${'1'.repeat(n)}.`;
    case 2: // nested parentheses
      return `${fn}${'('.repeat(n >> 1)}${')'.repeat(n >> 1)}`;
    case 3: // many commas
      return `${fn}(${'1,'.repeat(n >> 1)})`;
    case 4: // spaces between numbers, then a wrong character
      return `${fn}(1${' '.repeat(n)}2 3x)`;
    case 5: // percentages and signs
      return `${fn}(${'+1.1e1%'.repeat(Math.ceil(n / 7))}`;
    case 6: // a long hex
      return `#${'f'.repeat(n)}g`;
    default: // a long word
      return `${'a'.repeat(n)}1`;
  }
}

/** fast-check: adversarial texts of up to `maxLength` characters. */
export function adversarialTexts(maxLength: number): fc.Arbitrary<string> {
  return fc
    .tuple(fc.nat(7), fc.constantFrom(...COLOUR_FUNCTIONS), fc.oneof(fc.integer({ min: 4, max: 80 }), fc.integer({ min: 4, max: maxLength - 20 }), fc.constant(maxLength - 20)))
    .map(([shape, fn, length]) => adversarialText(shape, fn, length));
}
