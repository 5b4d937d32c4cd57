// Where ONNX Runtime's headers and shared library are: ORT_ROOT (an official distribution with
// include/ and lib/), else the npm package com.github.asus4.onnxruntime (Microsoft's build: headers
// in its iOS framework folder, the linux-x64 library under Plugins/Linux/x64).
// Used by CMakeLists.txt and binding.gyp so that both builds agree. Usage: node ort-paths.cjs include|library
const { existsSync, readdirSync } = require('node:fs');
const { join } = require('node:path');

function paths() {
  const root = process.env.ORT_ROOT;
  if (root) {
    const lib = join(root, 'lib');
    const names = existsSync(lib) ? readdirSync(lib).filter((n) => /^libonnxruntime\.so(\.1(\.\d+)*)?$/.test(n)).sort() : [];
    return { include: join(root, 'include'), library: names.length ? join(lib, names[names.length - 1]) : join(lib, 'libonnxruntime.so') };
  }
  const pkg = join(__dirname, '..', 'node_modules', 'com.github.asus4.onnxruntime');
  return {
    include: join(pkg, 'Plugins', 'iOS~', 'onnxruntime.xcframework', 'ios-arm64_x86_64-simulator', 'onnxruntime.framework', 'Headers'),
    library: join(pkg, 'Plugins', 'Linux', 'x64', 'libonnxruntime.so'),
  };
}

const which = process.argv[2];
const found = paths();
if (!(which in found)) {
  console.error('usage: node ort-paths.cjs include|library');
  process.exit(2);
}
if (!existsSync(found[which])) {
  console.error(`ONNX Runtime ${which} not found at ${found[which]}: run npm install, or set ORT_ROOT`);
  process.exit(1);
}
process.stdout.write(found[which]);
