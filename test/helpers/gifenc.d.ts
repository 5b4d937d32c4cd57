// gifenc ships no types; the three functions the tests use (a CommonJS default export).
declare module 'gifenc' {
  type Format = 'rgb565' | 'rgb444' | 'rgba4444';
  const gifenc: {
    GIFEncoder(): {
      writeFrame(
        index: Uint8Array,
        width: number,
        height: number,
        options: { palette: number[][]; delay?: number; repeat?: number; transparent?: boolean; transparentIndex?: number; dispose?: number },
      ): void;
      finish(): void;
      bytes(): Uint8Array;
    };
    quantize(rgba: Uint8Array, maxColors: number, options?: { format?: Format; oneBitAlpha?: boolean | number }): number[][];
    applyPalette(rgba: Uint8Array, palette: number[][], format?: Format): Uint8Array;
  };
  export default gifenc;
}
