#include "upscale.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace matte {

namespace {

// Where output position `i` of `out` samples an input of `in`: the left (top) source index and
// the weight of the next one, in 1/256.
struct Tap {
  int index;
  int weight;
};

std::vector<Tap> taps(int in, int out) {
  std::vector<Tap> result(out);
  for (int i = 0; i < out; i++) {
    double s = std::clamp(i * double(in) / out - 0.5, 0.0, double(in - 1));
    int left = std::min(int(s), std::max(0, in - 2));
    result[i] = {left, in > 1 ? int(std::lround((s - left) * 256)) : 0};
  }
  return result;
}

}  // namespace

vips::VImage upscale_bilinear(const uint8_t *plane, int w, int h, int W, int H) {
  VipsImage *image = vips_image_new_memory();
  vips_image_init_fields(image, W, H, 1, VIPS_FORMAT_UCHAR, VIPS_CODING_NONE, VIPS_INTERPRETATION_B_W, 1.0, 1.0);
  if (vips_image_write_prepare(image)) {
    g_object_unref(image);
    throw vips::VError();
  }
  vips::VImage out(image);
  const std::vector<Tap> across = taps(w, W), down = taps(h, H);
  const int next_column = w > 1 ? 1 : 0;
  const int next_row = h > 1 ? w : 0;
  // Two source rows stretched across, kept while output rows fall between the same two.
  std::vector<int> upper(W), lower(W);
  int cached = -1;
  for (int y = 0; y < H; y++) {
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
  return out;
}

}  // namespace matte
