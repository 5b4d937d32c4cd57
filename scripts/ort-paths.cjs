// Where ONNX Runtime's headers and shared library are, for an architecture (x64 or arm64; the
// host's by default): ORT_ROOT (an official distribution with include/ and lib/), else npm packages.
// The headers (arch-independent) come from com.github.asus4.onnxruntime (Microsoft's build: in its
// iOS framework folder). The linux-x64 library is that package's too; the linux-arm64 glibc one is
// onnxruntime-node's, checked against its sha256 so that the prebuilt package ships a known file.
// Used by CMakeLists.txt and binding.gyp so that both builds agree.
// Usage: node ort-paths.cjs include|library [x64|arm64]
const { createHash } = require('node:crypto');
const { existsSync, readdirSync, readFileSync } = require('node:fs');
const { dirname, join } = require('node:path');

// onnxruntime-node 1.30.0's bin/napi-v6/linux/arm64/libonnxruntime.so.1 (ONNX Runtime 1.30.0).
const ARM64_LIBRARY = { pkg: 'onnxruntime-node', version: '1.30.0', path: 'bin/napi-v6/linux/arm64/libonnxruntime.so.1', sha256: '1f549d46250b005580b597f4164984aaf75b3bcb9f3aeb07c7f8a8fe60b23c76' };

/** An npm package's folder, looked up from matte's root as Node would (hoisted or nested). */
function packageDir(name) {
  try {
    return dirname(require.resolve(`${name}/package.json`, { paths: [join(__dirname, '..')] }));
  } catch {
    return join(__dirname, '..', 'node_modules', name);
  }
}

function paths(arch) {
  const root = process.env.ORT_ROOT;
  if (root) {
    const lib = join(root, 'lib');
    const names = existsSync(lib) ? readdirSync(lib).filter((n) => /^libonnxruntime\.so(\.1(\.\d+)*)?$/.test(n)).sort() : [];
    return { include: join(root, 'include'), library: names.length ? join(lib, names[names.length - 1]) : join(lib, 'libonnxruntime.so') };
  }
  const include = join(packageDir('com.github.asus4.onnxruntime'), 'Plugins', 'iOS~', 'onnxruntime.xcframework', 'ios-arm64_x86_64-simulator', 'onnxruntime.framework', 'Headers');
  if (arch === 'arm64') return { include, library: join(packageDir(ARM64_LIBRARY.pkg), ARM64_LIBRARY.path), pinned: ARM64_LIBRARY };
  return { include, library: join(packageDir('com.github.asus4.onnxruntime'), 'Plugins', 'Linux', arch, 'libonnxruntime.so') };
}

const [which, arch = process.arch] = process.argv.slice(2);
const found = paths(arch);
if (which !== 'include' && which !== 'library') {
  console.error('usage: node ort-paths.cjs include|library [x64|arm64]');
  process.exit(2);
}
if (!existsSync(found[which])) {
  const install = arch === 'arm64' ? `npm install com.github.asus4.onnxruntime ${ARM64_LIBRARY.pkg}@${ARM64_LIBRARY.version}` : 'npm install com.github.asus4.onnxruntime';
  console.error(`ONNX Runtime ${which} for linux-${arch} not found at ${found[which]}: ${install}, or set ORT_ROOT`);
  process.exit(1);
}
if (which === 'library' && found.pinned) {
  const sha256 = createHash('sha256').update(readFileSync(found.library)).digest('hex');
  if (sha256 !== found.pinned.sha256) {
    console.error(`${found.library} is not ${found.pinned.pkg} ${found.pinned.version}'s (sha256 ${sha256}): install ${found.pinned.pkg}@${found.pinned.version}, or set ORT_ROOT`);
    process.exit(1);
  }
}
process.stdout.write(found[which]);
