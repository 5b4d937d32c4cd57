// One process of test/engine/png.test.ts: decodes the PNG files named on the command line with
// sharp (its own libvips and libspng), writing each one's raw pixels to <file>.raw, and prints one
// JSON line with what sharp saw. sharp never shares a process with matte's addon in the tests.
import { writeFile } from 'node:fs/promises';
import sharp from 'sharp';

const out = [];
for (const file of process.argv.slice(2)) {
  const { data, info } = await sharp(file, { limitInputPixels: false }).raw().toBuffer({ resolveWithObject: true });
  await writeFile(`${file}.raw`, data);
  out.push({ file, width: info.width, height: info.height, channels: info.channels });
}
console.log(JSON.stringify(out));
