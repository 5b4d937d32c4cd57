// Decodes an image with sharp (its own libvips, libheif and dav1d) to raw RGBA, for tests that
// check matte's outputs with a second decoder. It runs in a child process only: sharp must never
// share a process with the addon (two libvips in one process crash), so this imports nothing of lib/.
//
//   node dist/test/helpers/sharp-decode.js IN OUT.raw   -> prints {width, height, channels}
import { writeFile } from 'node:fs/promises';
import sharp from 'sharp';

async function main(): Promise<void> {
  const [input, output] = process.argv.slice(2);
  if (!input || !output) throw new Error('usage: sharp-decode IN OUT.raw');
  const channels = (await sharp(input).metadata()).channels;
  const { data, info } = await sharp(input).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  await writeFile(output, data);
  process.stdout.write(JSON.stringify({ width: info.width, height: info.height, channels }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
