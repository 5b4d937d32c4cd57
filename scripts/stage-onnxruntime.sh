#!/bin/sh
# Stages ONNX Runtime beside the addon as libmatte-onnxruntime.so.1, file name and SONAME, for
# CMakeLists.txt and binding.gyp alike. Why renamed: onnxruntime-node ships another version as
# libonnxruntime.so.1, and the dynamic loader keeps one library per SONAME in a process, so the
# second addon loaded would get the first one's library and fail on its versioned symbols.
# Usage: stage-onnxruntime.sh SOURCE_LIBRARY DESTINATION
set -e
if ! command -v patchelf >/dev/null 2>&1; then
  echo "patchelf is needed to build matte from source (Debian/Ubuntu: apt-get install patchelf)" >&2
  exit 1
fi
mkdir -p "$(dirname "$2")"
cp "$1" "$2.tmp"
patchelf --set-soname libmatte-onnxruntime.so.1 "$2.tmp"
mv "$2.tmp" "$2"
