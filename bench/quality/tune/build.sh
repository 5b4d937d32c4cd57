#!/bin/sh
# Builds bench/quality/data/refine-tune (the refinement's fast parameter search, see
# refine-tune.cc; run it through refine-tune.ts, which passes the model's registry entry) from
# the addon's own refine.cc and model.cc, against the ONNX Runtime the addon build staged in
# build/Release. As in the addon, ONNX Runtime is opened on the first model (onnxruntime.cc) from
# the directory of the code's own file, so the tool gets a link to it beside itself. Run from the
# repository root after `sh scripts/setup.sh`.
set -e
ort_include=$(node scripts/ort-paths.cjs include)
mkdir -p bench/quality/data
ln -sf "$PWD/build/Release/libmatte-onnxruntime.so.1" bench/quality/data/libmatte-onnxruntime.so.1
g++ -std=c++17 -O2 -Wall -DORT_API_MANUAL_INIT -o bench/quality/data/refine-tune \
  bench/quality/tune/refine-tune.cc native/matte/refine.cc native/matte/foreground.cc native/matte/second_pass.cc native/matte/guided_filter.cc native/matte/edge_colour.cc native/matte/refine_bands.cc native/matte/model.cc native/matte/onnxruntime.cc native/matte/inference_gate.cc native/budget.cc native/huge_pages.cc \
  -I"$ort_include" $(pkg-config --cflags --libs vips-cpp) -ldl -lpthread
echo "built bench/quality/data/refine-tune (run it through node dist/bench/quality/tune/refine-tune.js MODEL ...)"
