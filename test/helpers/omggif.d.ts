// omggif ships no types; the reader part the tests use (a CommonJS module).
declare module 'omggif' {
  export interface FrameInfo {
    x: number;
    y: number;
    width: number;
    height: number;
    delay: number; // centiseconds
    disposal: number;
    transparent_index: number | null;
  }
  export class GifReader {
    constructor(data: Uint8Array);
    width: number;
    height: number;
    numFrames(): number;
    loopCount(): number | null;
    frameInfo(frame: number): FrameInfo;
    decodeAndBlitFrameRGBA(frame: number, pixels: Uint8Array): void;
  }
  const omggif: { GifReader: typeof GifReader };
  export default omggif;
}
