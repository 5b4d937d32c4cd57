#include "upscale.h"

#include "../huge_pages.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <system_error>
#include <thread>
#include <vector>

namespace matte {

namespace {

// Where output position `i` of `out` samples an input of `in`: the left (top) source index and
// the weight of the next one, in 1/256.
struct Tap {
  int index;
  int weight;
};

std::vector<Tap> taps(int in, int out, bool centres) {
  std::vector<Tap> result(out);
  const double shift = centres ? 0.5 : 0;
  for (int i = 0; i < out; i++) {
    double s = std::clamp((i + shift) * double(in) / out - 0.5, 0.0, double(in - 1));
    int left = std::min(int(s), std::max(0, in - 2));
    result[i] = {left, in > 1 ? int(std::lround((s - left) * 256)) : 0};
  }
  return result;
}

}  // namespace

vips::VImage upscale_bilinear(const uint8_t *plane, int w, int h, int W, int H, bool centres) {
  vips::VImage out = new_memory_image(W, H, 1, VIPS_FORMAT_UCHAR);  // huge_pages.h: written once
  VipsImage *image = out.get_image();
  const std::vector<Tap> across = taps(w, W, centres), down = taps(h, H, centres);
  const int next_column = w > 1 ? 1 : 0;
  const int next_row = h > 1 ? w : 0;
  // Output rows [from, to), with `upper`/`lower` (W each) as the band's own row cache.
  auto stretch_rows = [&](int from, int to, int *upper, int *lower) {
    // Two source rows stretched across, kept while output rows fall between the same two.
    int cached = -1;
    for (int y = from; y < to; y++) {
      const Tap row = down[y];
      if (row.index != cached) {
        const uint8_t *a = plane + size_t(row.index) * w;
        const uint8_t *b = a + next_row;
        for (int x = 0; x < W; x++) {
          const Tap t = across[x];
          upper[x] = a[t.index] * (256 - t.weight) + a[t.index + next_column] * t.weight;
          lower[x] = b[t.index] * (256 - t.weight) + b[t.index + next_column] * t.weight;
        }
        cached = row.index;
      }
      uint8_t *line = VIPS_IMAGE_ADDR(image, 0, y);
      for (int x = 0; x < W; x++) line[x] = uint8_t((upper[x] * (256 - row.weight) + lower[x] * row.weight + 32768) >> 16);
    }
  };
  // In bands of rows on the job's threads: on one thread the stretch (and the first touch of its
  // pages) would run alone between the model and the PNG encoder, the other cores idle.
  const int bands = std::clamp(vips_concurrency_get(), 1, std::max(1, std::min(H / 64, 16)));
  std::vector<int> caches(size_t(bands) * 2 * size_t(W));
  std::vector<std::thread> helpers;
  helpers.reserve(size_t(bands - 1));
  int handed = 1;  // bands 1 .. handed - 1 run on helper threads
  try {
    for (; handed < bands; handed++)
      helpers.emplace_back(stretch_rows, int(int64_t(H) * handed / bands), int(int64_t(H) * (handed + 1) / bands),
                           &caches[size_t(handed) * 2 * W], &caches[(size_t(handed) * 2 + 1) * W]);
  } catch (const std::system_error &) {
    // No thread to be had: the bands not handed out are done here, after band 0.
  }
  stretch_rows(0, int(int64_t(H) / bands), &caches[0], &caches[size_t(W)]);
  if (handed < bands) stretch_rows(int(int64_t(H) * handed / bands), H, &caches[0], &caches[size_t(W)]);
  for (std::thread &helper : helpers) helper.join();
  return out;
}

}  // namespace matte
