{
  # The same build as CMakeLists.txt, for node-gyp tooling (`npm run build:gyp`; CI builds both).
  "variables": {
    "ort_include": "<!(node scripts/ort-paths.cjs include)",
    "ort_library": "<!(node scripts/ort-paths.cjs library)"
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
      "target_name": "matte",
      "dependencies": ["onnxruntime_library"],
      "sources": ["<!@(ls native/*.cc native/steps/*.cc native/matte/*.cc native/encode/*.cc)"],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "<!@(pkg-config --cflags-only-I vips-cpp libheif | sed 's/-I//g')",
        "<(ort_include)"
      ],
      "defines": ["NAPI_VERSION=8", "NODE_ADDON_API_DISABLE_DEPRECATED", "ORT_API_MANUAL_INIT"],
      "cflags_cc": ["-std=c++17", "-O2", "-fvisibility=hidden", "-fvisibility-inlines-hidden", "<!@(pkg-config --cflags-only-other vips-cpp)"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17"],
      "cflags!": ["-fno-exceptions"],
      "libraries": [
        "<!@(pkg-config --libs vips-cpp)",
        "-ldeflate",
        "-lwebp",
        "-lwebpmux",
        "-limagequant",
        "-lcgif",
        "-lz",
        "-ldl"
      ]
    }
  ]
}
