// binding.gyp's unity build, what CMakeLists.txt asks of CMake with UNITY_BUILD: node-gyp has no such
// switch, so this writes the sources it is given, in that order, into files of up to `batch` each
// (`#include` lines) under `dir` and prints their paths for gyp's `sources`. Every translation unit
// parses libvips' C++ headers, most of what a compile costs; a file of eight parses them once.
// A file is rewritten only when its text changes, so that make rebuilds only what did.
// Usage: node scripts/unity-sources.cjs DIR BATCH SOURCE...
const { mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const { join, relative } = require('node:path');

const [dir, batch, ...sources] = process.argv.slice(2);
const size = Number(batch);
if (!dir || !(size >= 1) || !sources.length) {
  console.error('usage: node scripts/unity-sources.cjs DIR BATCH SOURCE...');
  process.exit(2);
}
mkdirSync(dir, { recursive: true });
const written = [];
for (let i = 0; i * size < sources.length; i++) {
  const path = join(dir, `unity_${i}.cc`);
  const text = sources
    .slice(i * size, (i + 1) * size)
    .map((source) => `#include "${relative(dir, source)}"\n`)
    .join('');
  let old = '';
  try {
    old = readFileSync(path, 'utf8');
  } catch {}
  if (old !== text) writeFileSync(path, text);
  written.push(path);
}
console.log(written.join(' '));
