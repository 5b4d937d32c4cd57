// The edit pipelines of issue 5 as matte operation lists. bench/workers/sharp-edit.ts builds the
// same work with sharp; the outputs of both are compared (dimensions must be equal).

export interface PipelineSpec {
  id: 'P1' | 'P2' | 'P3' | 'P4' | 'P5';
  title: string;
  /** File name in bench/out/inputs (made by workers/inputs.ts). */
  input: string;
  operations: unknown[];
  format: 'jpeg' | 'webp' | 'png' | 'avif' | 'gif';
  quality?: number;
}

export const INPUT_FILES = {
  photo: 'photo-4000x3000.jpg',
  alpha: 'alpha-1024.png',
  anim: 'anim-480x270x40.gif',
  small: 'small-640x480.jpg',
  lenna: 'lenna.png',
  backdrop: 'backdrop-3600x2400.jpg',
  thumbSource: 'photo-2000x1333.jpg',
} as const;

export const PIPELINES: PipelineSpec[] = [
  {
    id: 'P1',
    title: '4000x3000 JPEG -> resize cover 800x600 -> jpeg q80',
    input: INPUT_FILES.photo,
    operations: [{ resize: { width: 800, height: 600, fit: 'cover' } }],
    format: 'jpeg',
    quality: 80,
  },
  {
    id: 'P2',
    title: '4000x3000 JPEG -> contain 1600x1600 -> rotate 90 -> flip h -> blur 10 -> brightness 1.2 -> webp q80',
    input: INPUT_FILES.photo,
    operations: [
      { resize: { width: 1600, height: 1600, fit: 'contain' } },
      { rotate: 90 },
      { flip: 'h' },
      { blur: 10 },
      { brightness: 1.2 },
    ],
    format: 'webp',
    quality: 80,
  },
  {
    id: 'P3',
    title: '4000x3000 JPEG -> saturation 0.5 -> contrast 1.3 -> png',
    input: INPUT_FILES.photo,
    operations: [{ saturation: 0.5 }, { contrast: 1.3 }],
    format: 'png',
  },
  {
    id: 'P4',
    title: '1024x1024 PNG with alpha -> background #ff0000 -> trim -> avif',
    input: INPUT_FILES.alpha,
    operations: [{ background: '#ff0000' }, { trim: true }],
    format: 'avif',
  },
  {
    id: 'P5',
    title: 'animated GIF 480x270, 40 frames -> resize 100x100 (contain) -> gif, all frames',
    input: INPUT_FILES.anim,
    operations: [{ resize: { width: 100, height: 100 } }],
    format: 'gif',
  },
];

/** lenna.png resized to a model's input size (made by workers/inputs.ts). */
export function modelSizeInput(width: number, height: number): string {
  return `lenna-${width}x${height}.png`;
}

/** The small raw edit of the HTTP benchmark (and of its lib-direct comparison). */
export const SMALL_EDIT = {
  input: INPUT_FILES.small,
  operations: [{ resize: { width: 320, height: 240, fit: 'cover' } }],
  format: 'jpeg' as const,
  quality: 80,
};

export const EXTENSIONS: Record<PipelineSpec['format'], string> = {
  jpeg: 'jpg',
  webp: 'webp',
  png: 'png',
  avif: 'avif',
  gif: 'gif',
};
