// The refinement's parameter search, fast: the model runs once per composite (its input image and
// matte are cached in bench/quality/data/cache/MODEL/, as are the second pass's crops), then the
// addon's refinement runs on the cache with every parameter set given (refine.cc, the second pass
// of second_pass.cc, the cut-out's colours of foreground.cc), scored as bench/quality/score.ts
// scores (IoU at 0.5, MAE, edge-band MAE, the same edge band, the composite over flat
// backgrounds). The same code as the addon, the same resampling (libvips Lanczos 3 down to the
// model, linear up for the plain matte); what it leaves out is the PNG decoding and encoding and
// the shrink-on-load of a JPEG's model input. Final figures come from score.ts, never from here.
//
//   sh bench/quality/tune/build.sh
//   node dist/bench/quality/tune/refine-tune.js MODEL SPLIT [--verbose] [--oracle] [--set=small] ['' 'key=v,...' ...]
//   node dist/bench/quality/tune/refine-tune.js MODEL --time=IMAGE     # the refinement's own cost on IMAGE
// (refine-tune.ts reads MODEL's entry from models/registry.json and passes it to this binary.)
//
// SPLIT: tune | report | all. Each parameter set is 'key=value,...' (keys: params_from below; '' =
// the defaults). The product never reads such a set: only this tool, built on its own, does.
#include "../../../native/budget.h"
#include "../../../native/errors.h"
#include "../../../native/huge_pages.h"
#include "../../../native/matte/foreground.h"
#include "../../../native/matte/model.h"
#include "../../../native/matte/refine.h"
#include "../../../native/matte/second_pass.h"

#include <vips/vips8>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

using vips::VImage;

namespace {

const std::string kData = "bench/quality/data";

// A parameter set of the search, 'key=value,...' over refine.h's RefineParams, foreground.h's
// ForegroundParams and second_pass.h's SecondPassParams; a value out of its range is brought back
// into it, never trusted.
struct Settings {
  matte::RefineParams refine;
  matte::ForegroundParams colours;
  matte::SecondPassParams pass;
  bool second_pass = true;
};

Settings params_from(const std::string &all, int model_pixels) {
  Settings set;
  matte::RefineParams &p = set.refine;
  size_t start = 0;
  while (start < all.size()) {
    size_t end = all.find(',', start);
    if (end == std::string::npos) end = all.size();
    std::string item = all.substr(start, end - start);
    size_t eq = item.find('=');
    if (eq != std::string::npos) {
      std::string key = item.substr(0, eq);
      double v = std::atof(item.c_str() + eq + 1);
      if (!std::isfinite(v) || std::fabs(v) > 1e9) v = 0;
      if (key == "low") p.band_low = float(v);
      else if (key == "high") p.band_high = float(v);
      else if (key == "grow") p.grow = int(v);
      else if (key == "radius") p.radius = int(v);
      else if (key == "eps") p.eps = float(v);
      else if (key == "stretch") p.stretch = float(v);
      else if (key == "slope") p.stretch_per_upscale = float(v);
      else if (key == "eradius") p.edge.radius = int(v);
      else if (key == "esure") p.edge.sure = int(v);
      else if (key == "esep") p.edge.separation = float(v);
      else if (key == "efit") p.edge.fit = float(v);
      else if (key == "epairs") p.edge.pairs = int(v);
      else if (key == "ewide") p.edge.wide = int(v);
      else if (key == "floor") p.floor = int(v);
      else if (key == "ceiling") p.ceiling = int(v);
      else if (key == "fwide") set.colours.wide = int(v);
      else if (key == "fnarrow") set.colours.narrow = int(v);
      else if (key == "fcells") set.colours.max_cells = v;
      else if (key == "sp") set.second_pass = v != 0;
      else if (key == "spthreshold") set.pass.threshold = int(v);
      else if (key == "spgrow") set.pass.grow = float(v);
      else if (key == "spshare") set.pass.max_model_pixels = v * model_pixels;  // a share of the model's input
      else if (key == "spagree") set.pass.min_agreement = v;
      else if (key == "spunsure") set.pass.max_unsure = v;
      else throw std::runtime_error("unknown parameter " + key);
    }
    start = end + 1;
  }
  p.band_low = std::clamp(p.band_low, 0.0f, 1.0f);
  p.band_high = std::clamp(p.band_high, p.band_low, 1.0f);
  p.grow = std::clamp(p.grow, 0, 64);
  p.radius = std::clamp(p.radius, 1, 64);
  p.eps = std::clamp(p.eps, 1e-8f, 10.0f);
  p.stretch = std::clamp(p.stretch, 0.0f, 100.0f);
  p.stretch_per_upscale = std::clamp(p.stretch_per_upscale, 0.0f, 100.0f);
  p.edge.radius = std::clamp(p.edge.radius, 0, 4);  // the pairs mode keeps at most 81 samples
  p.edge.sure = std::clamp(p.edge.sure, 128, 255);
  p.edge.separation = std::max(p.edge.separation, 1e-3f);
  p.edge.fit = std::max(p.edge.fit, 1e-3f);
  p.edge.pairs = std::clamp(p.edge.pairs, 0, 1);
  p.edge.wide = std::clamp(p.edge.wide, 1, 8);
  p.floor = std::clamp(p.floor, 0, 255);
  p.ceiling = std::clamp(p.ceiling, p.floor, 255);
  set.colours.wide = std::clamp(set.colours.wide, 1, 1000);
  set.colours.narrow = std::clamp(set.colours.narrow, 1, 50);
  set.colours.max_cells = std::clamp(set.colours.max_cells, 1.0, 1e8);
  set.pass.threshold = std::clamp(set.pass.threshold, 1, 255);
  set.pass.grow = std::clamp(set.pass.grow, 0.0f, 10.0f);
  set.pass.min_agreement = std::clamp(set.pass.min_agreement, 0.0, 1.0);
  return set;
}

// As native/steps/remove_background.cc.
VImage stretch(const VImage &in, int width, int height, VipsKernel kernel) {
  VImage out = in.resize(double(width) / in.width(),
                         VImage::option()->set("vscale", double(height) / in.height())->set("kernel", kernel));
  if (out.width() != width || out.height() != height)
    out = out.embed(0, 0, width, height, VImage::option()->set("extend", VIPS_EXTEND_COPY)).crop(0, 0, width, height);
  return out;
}

std::vector<float> to_planar(const VImage &rgb, const matte::ModelSpec &spec) {
  const size_t pixels = size_t(rgb.width()) * rgb.height();
  const uint8_t *data = static_cast<const uint8_t *>(rgb.data());
  double divide = spec.divide;
  if (divide <= 0) divide = std::max<double>(1, *std::max_element(data, data + pixels * 3));
  std::vector<float> chw(pixels * 3);
  for (size_t i = 0; i < pixels; i++)
    for (int c = 0; c < 3; c++)
      chw[c * pixels + i] = float(data[i * 3 + c] / (divide * spec.std[c]) - spec.mean[c] / spec.std[c]);
  return chw;
}

// The model's registry entry, from the arguments refine-tune.ts passes (it reads
// models/registry.json, so this tool never holds a second copy of it):
//   --model-path=FILE --input=WxH --divide=N --mean=R,G,B --std=R,G,B --output=NAME --postprocess=NAME
// divide 0: the image's largest value ("max" in the registry).
matte::ModelSpec spec_from(const std::vector<std::string> &args) {
  matte::ModelSpec s;
  bool seen[7] = {};
  auto triple = [](const std::string &v) {
    std::array<double, 3> t{};
    if (std::sscanf(v.c_str(), "%lf,%lf,%lf", &t[0], &t[1], &t[2]) != 3) throw std::runtime_error("expected R,G,B: " + v);
    return t;
  };
  for (const std::string &a : args) {
    const size_t eq = a.find('=');
    const std::string key = a.substr(0, eq), v = eq == std::string::npos ? "" : a.substr(eq + 1);
    if (key == "--model-path") s.path = v, seen[0] = true;
    else if (key == "--input") {
      if (std::sscanf(v.c_str(), "%dx%d", &s.input_width, &s.input_height) != 2) throw std::runtime_error("--input=WxH");
      seen[1] = true;
    } else if (key == "--divide") s.divide = std::atof(v.c_str()), seen[2] = true;
    else if (key == "--mean") s.mean = triple(v), seen[3] = true;
    else if (key == "--std") s.std = triple(v), seen[4] = true;
    else if (key == "--output") s.output = v, seen[5] = true;
    else if (key == "--postprocess") {
      if (v == "minmax") s.postprocess = matte::ModelSpec::Postprocess::MinMax;
      else if (v == "clamp") s.postprocess = matte::ModelSpec::Postprocess::Clamp;
      else if (v == "sigmoid") s.postprocess = matte::ModelSpec::Postprocess::Sigmoid;
      else throw std::runtime_error("unknown post-process " + v);
      seen[6] = true;
    }
  }
  for (bool b : seen)
    if (!b) throw std::runtime_error("the model entry is incomplete: run refine-tune through dist/bench/quality/tune/refine-tune.js");
  return s;
}

std::vector<uint8_t> read_file(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}
void write_file(const std::string &path, const void *data, size_t n) {
  std::ofstream f(path, std::ios::binary);
  f.write(static_cast<const char *>(data), std::streamsize(n));
}

// As bench/quality/metrics.ts.
std::vector<uint8_t> edge_band(const uint8_t *t, int w, int h, int r) {
  std::vector<uint8_t> edge(size_t(w) * h), band(size_t(w) * h);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      size_t i = size_t(y) * w + x;
      bool in = t[i] >= 128;
      if ((x + 1 < w && (t[i + 1] >= 128) != in) || (y + 1 < h && (t[i + w] >= 128) != in)) edge[i] = 1;
    }
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      if (!edge[size_t(y) * w + x]) continue;
      for (int yy = std::max(0, y - r); yy <= std::min(h - 1, y + r); yy++)
        for (int xx = std::max(0, x - r); xx <= std::min(w - 1, x + r); xx++) band[size_t(yy) * w + xx] = 1;
    }
  for (size_t i = 0; i < band.size(); i++)
    if (t[i] > 0 && t[i] < 255) band[i] = 1;
  return band;
}

struct Case {
  std::string name;
  VImage rgb;
  std::vector<uint8_t> small, matte, truth, band, fg;  // fg: the true foreground colours (RGB)
};

struct Scores {
  double iou = 0, mae = 0, edge = 0;
  // Of the edge-band error sum (as shares of the band's pixel count): where the truth is partial;
  // where it is 0 or 255 and the prediction is on the wrong side of 128; on the right side.
  double partial = 0, wrong = 0, soft = 0;
  // The cut-out over black, white and green against the truth over the same (metrics.ts
  // compositeScore): in the edge band and over the whole image; and with the input's colours.
  double composite_edge = 0, composite_all = 0, input_edge = 0, oracle_edge = 0;
  Scores &operator+=(const Scores &o) {
    iou += o.iou, mae += o.mae, edge += o.edge, partial += o.partial, wrong += o.wrong, soft += o.soft;
    composite_edge += o.composite_edge, composite_all += o.composite_all, input_edge += o.input_edge;
    oracle_edge += o.oracle_edge;
    return *this;
  }
};
Scores score(const uint8_t *p, const Case &c) {
  long inter = 0, uni = 0, bandCount = 0;
  double sum = 0, bandSum = 0, partial = 0, wrong = 0, soft = 0;
  for (size_t i = 0; i < c.truth.size(); i++) {
    bool pi = p[i] >= 128, ti = c.truth[i] >= 128;
    inter += pi && ti;
    uni += pi || ti;
    int d = std::abs(int(p[i]) - int(c.truth[i]));
    sum += d;
    if (c.band[i]) {
      bandSum += d, bandCount++;
      if (c.truth[i] > 0 && c.truth[i] < 255) partial += d;
      else if (pi != ti) wrong += d;
      else soft += d;
    }
  }
  const double bn = std::max(1L, bandCount);
  Scores s;
  s.iou = uni ? double(inter) / uni : 1, s.mae = sum / c.truth.size(), s.edge = bandCount ? bandSum / bandCount : 0;
  s.partial = partial / bn, s.wrong = wrong / bn, s.soft = soft / bn;
  return s;
}

// As metrics.ts compositeScore: colours `rgb` (stride bytes a pixel) with `alpha` over each flat
// background against the truth; {edge band, whole image}.
std::pair<double, double> composite(const uint8_t *rgb, int stride, const uint8_t *alpha, const Case &c) {
  static const int backgrounds[3][3] = {{0, 0, 0}, {255, 255, 255}, {0, 255, 0}};
  double sum = 0, band_sum = 0;
  long band_count = 0;
  for (size_t i = 0; i < c.truth.size(); i++) {
    const double a = alpha[i] / 255.0, t = c.truth[i] / 255.0;
    double d = 0;
    for (const auto &bg : backgrounds)
      for (int ch = 0; ch < 3; ch++)
        d += std::fabs(a * rgb[i * stride + ch] + (1 - a) * bg[ch] - (t * c.fg[i * 3 + ch] + (1 - t) * bg[ch]));
    d /= 9;
    sum += d;
    if (c.band[i]) band_sum += d, band_count++;
  }
  return {band_count ? band_sum / band_count : 0, sum / c.truth.size()};
}

// For the log: features of the model's matte that might tell a crop's worth before running it:
// its unsure pixels (between 10% and 90%) per pixel of subject (>= 50%), the components of the
// subject (4-connected) and the largest one's share of it.
std::string matte_features(const std::vector<uint8_t> &m, int w, int h) {
  long subject = 0, unsure = 0;
  for (uint8_t v : m) subject += v >= 128, unsure += v > 25 && v < 230;
  std::vector<int> label(m.size(), 0);
  int components = 0;
  long largest = 0;
  std::vector<int> stack;
  for (size_t i = 0; i < m.size(); i++) {
    if (m[i] < 128 || label[i]) continue;
    components++;
    long size = 0;
    stack.push_back(int(i));
    label[i] = components;
    while (!stack.empty()) {
      const int j = stack.back();
      stack.pop_back();
      size++;
      const int x = j % w, y = j / w;
      const int next[4][2] = {{x - 1, y}, {x + 1, y}, {x, y - 1}, {x, y + 1}};
      for (const auto &q : next) {
        if (q[0] < 0 || q[0] >= w || q[1] < 0 || q[1] >= h) continue;
        const int k = q[1] * w + q[0];
        if (m[k] >= 128 && !label[k]) label[k] = components, stack.push_back(k);
      }
    }
    largest = std::max(largest, size);
  }
  char text[128];
  std::snprintf(text, sizeof text, "unsure/subject %.2f components %d largest %.2f", subject ? double(unsure) / subject : 0.0,
                components, subject ? double(largest) / subject : 0.0);
  return text;
}

// FNV-1a of a buffer: the name of a cached crop inference.
uint64_t fnv1a(const uint8_t *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

}  // namespace

int main(int argc, char **argv) {
  if (VIPS_INIT(argv[0])) return 1;
  vips_concurrency_set(1);
  // The registry entry's arguments (refine-tune.ts puts them first), then MODEL SPLIT ...
  std::vector<std::string> entry_args;
  while (argc > 1 && std::strncmp(argv[1], "--", 2) == 0 && std::strcmp(argv[1], "--verbose") != 0) {
    entry_args.push_back(argv[1]);
    argv++, argc--;
  }
  if (argc < 3) {
    std::cerr << "usage: node dist/bench/quality/tune/refine-tune.js MODEL SPLIT [--verbose] [params...]\n";
    return 2;
  }
  std::string model_name = argv[1], split = argv[2];
  const matte::ModelSpec model_spec = spec_from(entry_args);
  if (split.rfind("--time=", 0) == 0) {
    // Model inference, the plain upscale and the refinement of one image, each timed on its own
    // (three runs each, alternated, the median).
    const matte::ModelSpec &spec = model_spec;
    matte::Model model(spec);
    VImage rgb = VImage::new_from_file(split.substr(7).c_str()).colourspace(VIPS_INTERPRETATION_sRGB).copy_memory();
    if (rgb.bands() != 3) rgb = rgb.extract_band(0, VImage::option()->set("n", 3)).copy_memory();
    VImage small = stretch(rgb, spec.input_width, spec.input_height, VIPS_KERNEL_LANCZOS3).copy_memory();
    std::vector<uint8_t> matte;
    std::vector<double> infer_ms, plain_ms, refine_ms, colour_ms;
    // CPU time of this process (libvips runs on one thread here, see vips_concurrency_set): less
    // disturbed by the other work on a shared machine than the wall clock.
    auto ms_since = [](std::clock_t start) { return 1000.0 * double(std::clock() - start) / CLOCKS_PER_SEC; };
    for (int run = 0; run < 3; run++) {
      std::clock_t t0 = std::clock();
      matte = model.infer(to_planar(small, spec));
      infer_ms.push_back(ms_since(t0));
      t0 = std::clock();
      VipsImage *m = vips_image_new_from_memory_copy(matte.data(), matte.size(), spec.input_width, spec.input_height,
                                                     1, VIPS_FORMAT_UCHAR);
      stretch(VImage(m), rgb.width(), rgb.height(), VIPS_KERNEL_LINEAR).copy_memory();
      plain_ms.push_back(ms_since(t0));
      t0 = std::clock();
      const VImage alpha = matte::refine_matte(rgb, static_cast<const uint8_t *>(small.data()), matte, spec.input_width,
                                               spec.input_height, matte::RefineParams());
      refine_ms.push_back(ms_since(t0));
      t0 = std::clock();
      VImage colour = matte::new_memory_image(rgb.width(), rgb.height(), 4, VIPS_FORMAT_UCHAR);
      matte::estimate_foreground(static_cast<const uint8_t *>(rgb.data()), static_cast<const uint8_t *>(alpha.data()),
                                 rgb.width(), rgb.height(), VIPS_IMAGE_ADDR(colour.get_image(), 0, 0),
                                 matte::ForegroundParams());
      colour_ms.push_back(ms_since(t0));
    }
    auto median = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[1]; };
    std::printf("%s %dx%d (CPU time): inference %.0f ms, plain upscale %.0f ms, refine %.0f ms (%.1f%% of inference), "
                "foreground colours %.0f ms\n",
                model_name.c_str(), rgb.width(), rgb.height(), median(infer_ms), median(plain_ms), median(refine_ms),
                100 * median(refine_ms) / median(infer_ms), median(colour_ms));
    // The second pass on this image, as removeBackground runs it (a real inference of the crop):
    // what it does and its CPU time.
    {
      VImage alpha = matte::refine_matte(rgb, static_cast<const uint8_t *>(small.data()), matte, spec.input_width,
                                         spec.input_height, matte::RefineParams());
      const matte::SecondPassParams params;
      matte::SecondPassParams any = params;
      any.max_model_pixels = 1e18, any.max_unsure = 0;
      const auto box = matte::second_pass_box(matte, spec.input_width, spec.input_height, rgb.width(), rgb.height(), any);
      double agreement = -1;
      auto model_sized = [&](const VImage &crop) {
        return stretch(crop, spec.input_width, spec.input_height, VIPS_KERNEL_LANCZOS3).copy_memory();
      };
      auto infer = [&](const VImage &crop_small) {
        std::vector<uint8_t> m = model.infer(to_planar(crop_small, spec));
        agreement = matte::matte_agreement(alpha, m, spec.input_width, spec.input_height, *box);
        return m;
      };
      std::clock_t t0 = std::clock();
      const matte::SecondPassOutcome outcome = matte::second_pass(rgb, matte, spec.input_width, spec.input_height,
                                                                  model_sized, infer, params, matte::RefineParams(),
                                                                  nullptr, alpha);
      const double pass_ms = ms_since(t0);
      std::printf("%s: second pass: box %.0f%% of the frame, %s", model_name.c_str(),
                  box ? 100.0 * box->width * box->height / (double(rgb.width()) * rgb.height()) : 0.0,
                  outcome == matte::SecondPassOutcome::NotRun ? "not run" : outcome == matte::SecondPassOutcome::Pasted ? "pasted" : "rejected");
      if (agreement >= 0) std::printf(" (agreement %.2f), %.0f ms of CPU", agreement, pass_ms);
      std::printf("\n");
    }
    // Wall time on one thread and on every core (the refinement's full-resolution passes and the
    // plain upscale both use the threads libvips gives the job), and the refined matte with other
    // thread counts, which must be byte-identical to the one-thread matte.
    auto refined = [&] {
      return matte::refine_matte(rgb, static_cast<const uint8_t *>(small.data()), matte, spec.input_width,
                                 spec.input_height, matte::RefineParams());
    };
    auto ms_wall = [](auto start) {
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    };
    const int cores = std::max(1u, std::thread::hardware_concurrency());
    for (int threads : {1, cores}) {
      vips_concurrency_set(threads);
      std::vector<double> plain_wall, refine_wall;
      for (int run = 0; run < 3; run++) {
        auto t0 = std::chrono::steady_clock::now();
        VipsImage *m = vips_image_new_from_memory_copy(matte.data(), matte.size(), spec.input_width,
                                                       spec.input_height, 1, VIPS_FORMAT_UCHAR);
        stretch(VImage(m), rgb.width(), rgb.height(), VIPS_KERNEL_LINEAR).copy_memory();
        plain_wall.push_back(ms_wall(t0));
        t0 = std::chrono::steady_clock::now();
        refined();
        refine_wall.push_back(ms_wall(t0));
      }
      std::printf("%s (wall time, %d thread%s): plain upscale %.0f ms, refine %.0f ms\n", model_name.c_str(), threads,
                  threads == 1 ? "" : "s", median(plain_wall), median(refine_wall));
    }
    // The cut-out (colours and matte) of a refined matte, as removeBackground makes it.
    auto cut_out = [&](const VImage &alpha) {
      VImage out = matte::new_memory_image(rgb.width(), rgb.height(), 4, VIPS_FORMAT_UCHAR);
      matte::estimate_foreground(static_cast<const uint8_t *>(rgb.data()), static_cast<const uint8_t *>(alpha.data()),
                                 rgb.width(), rgb.height(), VIPS_IMAGE_ADDR(out.get_image(), 0, 0),
                                 matte::ForegroundParams());
      return out;
    };
    vips_concurrency_set(1);
    VImage one = refined(), one_cutout = cut_out(one);
    const size_t bytes = size_t(one.width()) * one.height();
    bool same = true;
    for (int threads : {2, 3, 5, 8}) {
      vips_concurrency_set(threads);
      VImage other = refined();
      if (std::memcmp(one.data(), other.data(), bytes) != 0 ||
          std::memcmp(one_cutout.data(), cut_out(other).data(), bytes * 4) != 0) {
        std::printf("%s: the cut-out with %d threads differs from the one-thread cut-out\n", model_name.c_str(), threads);
        same = false;
      }
    }
    if (same) std::printf("%s: the matte and cut-out with 2, 3, 5 and 8 threads are byte-identical to one thread's\n",
                          model_name.c_str());
    // A job stopped before (or during) the refinement: its bands poll the budget and it throws.
    matte::Budget stopped;
    stopped.start(0);
    stopped.cancel();
    bool aborted = false;
    try {
      matte::refine_matte(rgb, static_cast<const uint8_t *>(small.data()), matte, spec.input_width, spec.input_height,
                          matte::RefineParams(), &stopped);
    } catch (const matte::Error &e) {
      aborted = e.code == "aborted";
    }
    std::printf("%s: a cancelled job's refinement %s\n", model_name.c_str(),
                aborted ? "throws aborted" : "did NOT stop");
    return same && aborted ? 0 : 1;
  }
  bool verbose = false, oracle = false;
  std::string set_suffix;  // "-small": the small-subject composites (prepare.js --set=small)
  std::vector<std::string> sets;
  for (int i = 3; i < argc; i++) {
    if (std::string(argv[i]) == "--verbose") verbose = true;
    else if (std::string(argv[i]) == "--oracle") oracle = true;
    else if (std::string(argv[i]) == "--set=small") set_suffix = "-small";
    else sets.push_back(argv[i]);
  }
  if (sets.empty()) sets.push_back("");
  const matte::ModelSpec &spec = model_spec;
  const int mw = spec.input_width, mh = spec.input_height;

  std::vector<std::string> names;
  const std::string composites = kData + "/composites" + set_suffix;
  DIR *dir = opendir(composites.c_str());
  if (!dir) throw std::runtime_error("no composites: run bench/quality/prepare.js first");
  while (dirent *e = readdir(dir)) {
    std::string n = e->d_name;
    if (n.size() > 10 && n.substr(n.size() - 10) == ".alpha.png") names.push_back(n.substr(0, n.size() - 10));
  }
  closedir(dir);
  std::sort(names.begin(), names.end());

  std::string cache = kData + "/cache/" + model_name + set_suffix;
  mkdir((kData + "/cache").c_str(), 0755);
  mkdir(cache.c_str(), 0755);
  mkdir((cache + "/crops").c_str(), 0755);
  std::unique_ptr<matte::Model> model;
  auto the_model = [&]() -> matte::Model & {
    if (!model) model = std::make_unique<matte::Model>(spec);
    return *model;
  };
  std::vector<Case> cases;
  for (const std::string &name : names) {
    int index = std::atoi(name.c_str());
    if (split == "tune" && index % 2) continue;
    if (split == "report" && !(index % 2)) continue;
    Case c;
    c.name = name;
    c.rgb = VImage::new_from_file((composites + "/" + name + ".png").c_str()).copy_memory();
    if (c.rgb.bands() != 3) throw std::runtime_error(name + ": not RGB");
    VImage truth = VImage::new_from_file((composites + "/" + name + ".alpha.png").c_str()).extract_band(0);
    size_t n = 0;
    uint8_t *t = static_cast<uint8_t *>(truth.write_to_memory(&n));
    c.truth.assign(t, t + n);
    g_free(t);
    VImage fg = VImage::new_from_file((composites + "/" + name + ".fg.png").c_str());
    if (fg.bands() != 3) throw std::runtime_error(name + ".fg.png: not RGB");
    uint8_t *f = static_cast<uint8_t *>(fg.write_to_memory(&n));
    c.fg.assign(f, f + n);
    g_free(f);
    c.band = edge_band(c.truth.data(), c.rgb.width(), c.rgb.height(), 4);
    c.small = read_file(cache + "/" + name + ".small");
    c.matte = read_file(cache + "/" + name + ".matte");
    if (c.small.size() != size_t(mw) * mh * 3 || c.matte.size() != size_t(mw) * mh) {
      VImage small = stretch(c.rgb, mw, mh, VIPS_KERNEL_LANCZOS3).copy_memory();
      const uint8_t *s = static_cast<const uint8_t *>(small.data());
      c.small.assign(s, s + size_t(mw) * mh * 3);
      c.matte = the_model().infer(to_planar(small, spec));
      write_file(cache + "/" + name + ".small", c.small.data(), c.small.size());
      write_file(cache + "/" + name + ".matte", c.matte.data(), c.matte.size());
    }
    cases.push_back(std::move(c));
  }

  // The model's matte of a crop's model-size image, cached by the image's bytes.
  auto crop_inference = [&](const VImage &small) {
    const uint8_t *s = static_cast<const uint8_t *>(small.data());
    const size_t bytes = size_t(mw) * mh * 3;
    char key[32];
    std::snprintf(key, sizeof key, "%016llx", static_cast<unsigned long long>(fnv1a(s, bytes)));
    const std::string file = cache + "/crops/" + key + ".matte";
    std::vector<uint8_t> matte = read_file(file);
    if (matte.size() == size_t(mw) * mh) return matte;
    matte = the_model().infer(to_planar(small, spec));
    write_file(file, matte.data(), matte.size());
    return matte;
  };
  auto model_sized = [&](const VImage &crop) { return stretch(crop, mw, mh, VIPS_KERNEL_LANCZOS3).copy_memory(); };

  // The plain matte (refine off) and which composites the model found (IoU >= 0.9).
  Scores plain;
  std::vector<bool> found;
  double plain_found_edge = 0;
  int nfound = 0;
  for (const Case &c : cases) {
    VipsImage *m = vips_image_new_from_memory_copy(c.matte.data(), c.matte.size(), mw, mh, 1, VIPS_FORMAT_UCHAR);
    VImage up = stretch(VImage(m), c.rgb.width(), c.rgb.height(), VIPS_KERNEL_LINEAR).copy_memory();
    const uint8_t *alpha = static_cast<const uint8_t *>(up.data());
    Scores s = score(alpha, c);
    std::tie(s.composite_edge, s.composite_all) = composite(static_cast<const uint8_t *>(c.rgb.data()), 3, alpha, c);
    s.input_edge = s.composite_edge;
    plain += s;
    found.push_back(s.iou >= 0.9);
    if (s.iou >= 0.9) plain_found_edge += s.edge, nfound++;
    if (verbose) std::printf("  plain %s\tIoU %.3f\tMAE %.2f\tedge %.2f\tcomposite edge %.2f\n", c.name.c_str(), s.iou, s.mae, s.edge, s.composite_edge);
  }
  const double n = double(cases.size());
  std::printf("%s %s: %zu composites, %d found\nplain\tIoU %.4f\tMAE %.2f\tedge %.2f\tfound-edge %.2f\t"
              "composite edge %.2f all %.2f\t(partial %.2f wrong %.2f soft %.2f)\n",
              model_name.c_str(), split.c_str(), cases.size(), nfound, plain.iou / n, plain.mae / n, plain.edge / n,
              plain_found_edge / std::max(1, nfound), plain.composite_edge / n, plain.composite_all / n,
              plain.partial / n, plain.wrong / n, plain.soft / n);
  auto oracle_text = [&](double edge) {
    char text[48] = "";
    if (oracle) std::snprintf(text, sizeof text, ", true colours %.3f", edge);
    return std::string(text);
  };
  for (const std::string &set : sets) {
    const Settings settings = params_from(set, mw * mh);
    Scores total;
    double found_edge = 0, ms = 0;
    int runs = 0, pasted = 0;
    for (size_t k = 0; k < cases.size(); k++) {
      const Case &c = cases[k];
      auto start = std::chrono::steady_clock::now();
      VImage alpha = matte::refine_matte(c.rgb, c.small.data(), c.matte, mw, mh, settings.refine);
      // For the log: the second pass's box (its share of the frame) and the crop's agreement.
      std::string pass_log;
      if (verbose && settings.second_pass) {
        matte::SecondPassParams any = settings.pass;
        any.max_model_pixels = 1e18;
        if (auto box = matte::second_pass_box(c.matte, mw, mh, c.rgb.width(), c.rgb.height(), any)) {
          const double share = double(box->width) * box->height / (double(c.rgb.width()) * c.rgb.height());
          const VImage small = model_sized(c.rgb.crop(box->left, box->top, box->width, box->height));
          const std::vector<uint8_t> crop = crop_inference(small);
          char text[96];
          std::snprintf(text, sizeof text, "box %.2f agreement %.2f ", share, matte::matte_agreement(alpha, crop, mw, mh, *box));
          pass_log = text + matte_features(c.matte, mw, mh) + " crop " + matte_features(crop, mw, mh);
        }
      }
      matte::SecondPassOutcome outcome = matte::SecondPassOutcome::NotRun;
      if (settings.second_pass)
        outcome = matte::second_pass(c.rgb, c.matte, mw, mh, model_sized, crop_inference, settings.pass,
                                     settings.refine, nullptr, alpha);
      runs += outcome != matte::SecondPassOutcome::NotRun, pasted += outcome == matte::SecondPassOutcome::Pasted;
      VImage cutout = matte::new_memory_image(c.rgb.width(), c.rgb.height(), 4, VIPS_FORMAT_UCHAR);
      const uint8_t *a = static_cast<const uint8_t *>(alpha.data());
      matte::estimate_foreground(static_cast<const uint8_t *>(c.rgb.data()), a, c.rgb.width(), c.rgb.height(),
                                 VIPS_IMAGE_ADDR(cutout.get_image(), 0, 0), settings.colours);
      ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      Scores s = score(a, c);
      std::tie(s.composite_edge, s.composite_all) = composite(VIPS_IMAGE_ADDR(cutout.get_image(), 0, 0), 4, a, c);
      s.input_edge = composite(static_cast<const uint8_t *>(c.rgb.data()), 3, a, c).first;
      if (oracle) {
        // The true foreground colours wherever the truth has any subject: what a perfect colour
        // estimate would reach with this matte.
        uint8_t *rgba = VIPS_IMAGE_ADDR(cutout.get_image(), 0, 0);
        for (size_t i = 0; i < c.truth.size(); i++)
          if (c.truth[i]) std::memcpy(rgba + i * 4, &c.fg[i * 3], 3);
        s.oracle_edge = composite(rgba, 4, a, c).first;
      }
      total += s;
      if (found[k]) found_edge += s.edge;
      if (verbose)
        std::printf("  %s\tIoU %.3f\tMAE %.2f\tedge %.2f\tcomposite edge %.2f (input colours %.2f)\tpass %s %s\t"
                    "partial %.2f wrong %.2f soft %.2f\n",
                    c.name.c_str(), s.iou, s.mae, s.edge, s.composite_edge, s.input_edge,
                    outcome == matte::SecondPassOutcome::NotRun ? "-" : outcome == matte::SecondPassOutcome::Pasted ? "pasted" : "rejected",
                    pass_log.c_str(), s.partial, s.wrong, s.soft);
    }
    std::printf("[%s]\tIoU %.4f\tMAE %.2f\tedge %.2f (%+.1f%%)\tfound-edge %.2f (%+.1f%%)\tcomposite edge %.3f all %.3f "
                "(input colours %.3f%s)\tsecond pass %d run, %d pasted\t%.1f ms/image\t(partial %.2f wrong %.2f soft %.2f)\n",
                set.c_str(), total.iou / n, total.mae / n, total.edge / n, 100 * (total.edge / plain.edge - 1),
                found_edge / std::max(1, nfound), 100 * (found_edge / std::max(1e-9, plain_found_edge) - 1),
                total.composite_edge / n, total.composite_all / n, total.input_edge / n,
                oracle_text(total.oracle_edge / n).c_str(), runs, pasted, ms / n,
                total.partial / n, total.wrong / n, total.soft / n);
    std::fflush(stdout);
  }
  return 0;
}
