// gifenc ships no types; the three functions the tests use (a CommonJS default export).
declare module 'gifenc' {
  const gifenc: {
    GIFEncoder(): {
      writeFrame(index: Uint8Array, width: number, height: number, options: { palette: number[][]; delay?: number; repeat?: number; transparent?: boolean }): void;
      finish(): void;
      bytes(): Uint8Array;
    };
    quantize(rgba: Uint8Array, maxColors: number): number[][];
    applyPalette(rgba: Uint8Array, palette: number[][]): Uint8Array;
  };
  export default gifenc;
}
