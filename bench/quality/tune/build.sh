#!/bin/sh
# Builds bench/quality/data/refine-tune (the refinement's fast parameter search, see
# refine-tune.cc; run it through refine-tune.ts, which passes the model's registry entry) from
# the addon's own refine.cc and model.cc, against the ONNX Runtime the addon build staged in
# build/Release. Run from the repository root after `sh scripts/setup.sh`.
set -e
ort_include=$(node scripts/ort-paths.cjs include)
mkdir -p bench/quality/data
g++ -std=c++17 -O2 -Wall -o bench/quality/data/refine-tune \
  bench/quality/tune/refine-tune.cc native/matte/refine.cc native/matte/guided_filter.cc native/matte/edge_colour.cc native/matte/closed_form.cc native/matte/refine_bands.cc native/matte/model.cc native/matte/inference_gate.cc native/budget.cc \
  -I"$ort_include" $(pkg-config --cflags --libs vips-cpp) \
  "$PWD/build/Release/libmatte-onnxruntime.so.1" -Wl,-rpath,"$PWD/build/Release" -lpthread
echo "built bench/quality/data/refine-tune (run it through node dist/bench/quality/tune/refine-tune.js MODEL ...)"
