{
  # The same build as CMakeLists.txt, for node-gyp tooling (`npm run build:gyp`; CI builds both).
  "variables": {
    "variables": {"ort_include": "<!(node scripts/ort-paths.cjs include)"},
    "ort_include": "<(ort_include)",
    "ort_library": "<!(node scripts/ort-paths.cjs library)",
    # What every target compiles and links with.
    "matte_include_dirs": [
      "<!(node -p \"require('node-addon-api').include_dir\")",
      "<!@(pkg-config --cflags-only-I vips-cpp libheif | sed 's/-I//g')",
      "<(ort_include)"
    ],
    "matte_defines": ["NAPI_VERSION=8", "NODE_ADDON_API_DISABLE_DEPRECATED", "ORT_API_MANUAL_INIT"],
    "matte_cflags_cc": ["-std=c++17", "-O2", "-fvisibility=hidden", "-fvisibility-inlines-hidden", "<!@(pkg-config --cflags-only-other vips-cpp)"],
    "matte_libraries": ["<!@(pkg-config --libs vips-cpp)", "-ldeflate", "-lwebp", "-lwebpmux", "-limagequant", "-lcgif", "-lz", "-ldl"]
  },
  "targets": [
    {
      # ONNX Runtime staged beside the addon as libmatte-onnxruntime.so.1, file and SONAME, so that it
      # cannot be mistaken for onnxruntime-node's libonnxruntime.so.1; not linked: the first model
      # opens it by its path (see CMakeLists.txt).
      "target_name": "onnxruntime_library",
      "type": "none",
      "actions": [
        {
          "action_name": "copy_onnxruntime",
          "inputs": ["<(ort_library)", "scripts/stage-onnxruntime.sh"],
          "outputs": ["<(PRODUCT_DIR)/libmatte-onnxruntime.so.1"],
          "action": ["sh", "scripts/stage-onnxruntime.sh", "<(ort_library)", "<(PRODUCT_DIR)/libmatte-onnxruntime.so.1"]
        }
      ]
    },
    {
      # The objects both addons share, compiled once (CMakeLists.txt's matte_core): every source but
      # the addons' entries (native/addon.cc, native/probes/).
      "target_name": "matte_core",
      "type": "static_library",
      # In files of eight, as CMake's UNITY_BUILD makes them (scripts/unity-sources.cjs).
      "sources": ["<!@(node scripts/unity-sources.cjs build/unity 8 $(ls native/*.cc native/steps/*.cc native/matte/*.cc native/encode/*.cc native/resample/*.cc | grep -v '^native/addon.cc$'))"],
      "include_dirs": ["<@(matte_include_dirs)"],
      "defines": ["<@(matte_defines)"],
      "cflags_cc": ["<@(matte_cflags_cc)"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17"],
      "cflags!": ["-fno-exceptions"]
    },
    {
      # The product addon: what lib/ uses.
      "target_name": "matte",
      "dependencies": ["onnxruntime_library", "matte_core"],
      "sources": ["native/addon.cc"],
      "include_dirs": ["<@(matte_include_dirs)"],
      "defines": ["<@(matte_defines)"],
      "cflags_cc": ["<@(matte_cflags_cc)"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17"],
      "cflags!": ["-fno-exceptions"],
      "libraries": ["<@(matte_libraries)"]
    },
    {
      # The probes addon (tests and benches: infer, encodePng; never packed).
      "target_name": "matte_probes",
      "dependencies": ["onnxruntime_library", "matte_core"],
      "sources": ["native/addon.cc", "<!@(ls native/probes/*.cc)"],
      "include_dirs": ["<@(matte_include_dirs)"],
      "defines": ["<@(matte_defines)", "MATTE_PROBES"],
      "cflags_cc": ["<@(matte_cflags_cc)"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17"],
      "cflags!": ["-fno-exceptions"],
      # The codec floor (native/probes/codec_floor.cc) calls libjpeg-turbo, libvips' own JPEG codec.
      "libraries": ["<@(matte_libraries)", "-ljpeg"]
    }
  ]
}
