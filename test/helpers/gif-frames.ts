// Every frame of a GIF as the viewer shows it (each frame composited over the ones before, by its
// disposal method), decoded by omggif: an independent decoder for matte's animated outputs.
import omggif from 'omggif';
import type { Decoded } from './images.js';

export interface GifAnimation {
  width: number;
  height: number;
  /** NETSCAPE2.0 repeat count (0: forever), null without the extension. */
  loop: number | null;
  frames: Array<Decoded & { delayMs: number }>;
}

export function decodeGifFrames(data: Buffer): GifAnimation {
  const reader = new omggif.GifReader(new Uint8Array(data));
  const { width, height } = reader;
  let canvas = new Uint8Array(width * height * 4);
  const frames: GifAnimation['frames'] = [];
  for (let i = 0; i < reader.numFrames(); i++) {
    const info = reader.frameInfo(i);
    const before = canvas.slice();
    reader.decodeAndBlitFrameRGBA(i, canvas);
    frames.push({ width, height, data: Buffer.from(canvas), hasAlpha: true, delayMs: info.delay * 10 });
    if (info.disposal === 2) {
      for (let y = info.y; y < info.y + info.height; y++) canvas.fill(0, (y * width + info.x) * 4, (y * width + info.x + info.width) * 4);
    } else if (info.disposal === 3) {
      canvas = before;
    }
  }
  return { width, height, loop: reader.loopCount(), frames };
}
