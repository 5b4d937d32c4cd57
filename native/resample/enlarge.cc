#include "enlarge.h"

#include "fixed_point.h"

#include <vips/vips.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

using vips::VImage;

namespace matte {

namespace {

using namespace resample;

constexpr int kHalf = 1 << (kShift - 1);

// libvips 8.14's bicubic tables (bicubic.cpp, calculate_coefficients_catmull): Catmull-Rom at
// t = k / 64, each coefficient truncated to 12 bits.
struct Table {
  int c[kTableSteps + 1][4];
  Table() {
    for (int k = 0; k <= kTableSteps; k++) {
      const double x = float(k) / kTableSteps;
      const double cr1 = 1. - x, cr2 = -.5 * x, cr3 = cr1 * cr2, cone = cr1 * cr3, cfou = x * cr3;
      const double cr4 = cfou - cone, ctwo = cr1 - cone + cr4, cthr = x - cfou - cr4;
      const double f[4] = {cone, ctwo, cthr, cfou};
      for (int i = 0; i < 4; i++) c[k][i] = int(f[i] * VIPS_INTERPOLATE_SCALE);
    }
  }
};

// One axis: for each output sample the input index of its first tap (before the edge is repeated)
// and its four coefficients.
struct EnlargeAxis {
  int in_size = 0, out_size = 0;
  std::vector<int> first;
  std::vector<std::array<int, 4>> taps;

  // The input indices that output samples [from, to) read, edges repeated: [lo, hi].
  void span(int from, int to, int &lo, int &hi) const {
    lo = std::clamp(first[from], 0, in_size - 1);
    hi = std::clamp(first[to - 1] + 3, 0, in_size - 1);
  }
};

// vips_affine's mapping for a scale of an axis whose inverse is `inverse` (as it computes it, from
// the whole matrix): output o samples input (inverse x o + 0.5) + 1 in its space of an input
// embedded by two pixels, the interpolator's window one more to the left and up; the table entry
// is that position rounded to 1/64, as vips_interpolate_bicubic_interpolate rounds it.
EnlargeAxis plan_axis(int in_size, int out_size, double inverse) {
  static const Table table;
  EnlargeAxis axis;
  axis.in_size = in_size;
  axis.out_size = out_size;
  axis.first.resize(out_size);
  axis.taps.resize(out_size);
  for (int o = 0; o < out_size; o++) {
    const double position = (inverse * o + 0.5) + 1.0;
    const int step = table_step(position);
    axis.first[o] = int(position) - 3;
    std::memcpy(axis.taps[o].data(), table.c[step], sizeof table.c[step]);
  }
  return axis;
}

struct Enlargement {
  EnlargeAxis across, down;
};

inline int16_t sample(const uint8_t *p, const std::array<int, 4> &k) {
  return int16_t((k[0] * p[0] + k[1] * p[kBands] + k[2] * p[2 * kBands] + k[3] * p[3 * kBands] + kHalf) >> kShift);
}

inline uint8_t clipped(const int16_t *const rows[4], const std::array<int, 4> &k, int i) {
  const int sum = (k[0] * rows[0][i] + k[1] * rows[1][i] + k[2] * rows[2][i] + k[3] * rows[3][i] + kHalf) >> kShift;
  return uint8_t(std::clamp(sum, 0, 255));
}

#if defined(__x86_64__)
// Horizontal, one pixel at a time: its four taps' bytes (12 contiguous, the row padded) spread to
// int16 pairs per band and multiplied-added with two taps at a time.
__attribute__((target("ssse3"))) void sample_row_ssse3(const uint8_t *row, const int *offsets,
                                                      const std::array<int, 4> *taps, int16_t *out, int count) {
  const __m128i first = _mm_setr_epi8(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1);
  const __m128i second = _mm_setr_epi8(6, -1, 9, -1, 7, -1, 10, -1, 8, -1, 11, -1, -1, -1, -1, -1);
  const __m128i round = _mm_set1_epi32(kHalf);
  for (int x = 0; x < count; x++) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i *>(row + offsets[x]));
    const std::array<int, 4> &k = taps[x];
    __m128i sum = _mm_add_epi32(_mm_madd_epi16(_mm_shuffle_epi8(bytes, first), _mm_set1_epi32(tap_pair(k[0], k[1]))),
                                _mm_madd_epi16(_mm_shuffle_epi8(bytes, second), _mm_set1_epi32(tap_pair(k[2], k[3]))));
    sum = _mm_srai_epi32(_mm_add_epi32(sum, round), kShift);
    _mm_storel_epi64(reinterpret_cast<__m128i *>(out + size_t(x) * kBands), _mm_packs_epi32(sum, sum));
  }
}
#endif

// The horizontal samples of one padded row (the output has one int16 of slack after it).
void sample_row(const uint8_t *row, const int *offsets, const std::array<int, 4> *taps, int16_t *out, int count) {
#if defined(__x86_64__)
  if (has_ssse3) return sample_row_ssse3(row, offsets, taps, out, count);
#endif
  for (int x = 0; x < count; x++)
    for (int c = 0; c < kBands; c++) out[x * kBands + c] = sample(row + offsets[x] + c, taps[x]);
}

// An output row from four rows of horizontal samples: the taps' sum, rounded and clipped.
void combine_rows(const int16_t *const rows[4], const std::array<int, 4> &k, uint8_t *out, int count) {
  int i = 0;
#if defined(__x86_64__)
  // SSE2: the rows' samples interleaved in pairs and multiplied-added with two taps at a time;
  // the saturating packs clip to 0..255 as VIPS_CLIP does.
  const __m128i k01 = _mm_set1_epi32(tap_pair(k[0], k[1])), k23 = _mm_set1_epi32(tap_pair(k[2], k[3]));
  const __m128i round = _mm_set1_epi32(kHalf);
  for (; i + 8 <= count; i += 8) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i *>(rows[0] + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(rows[1] + i));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i *>(rows[2] + i));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i *>(rows[3] + i));
    const __m128i low = _mm_add_epi32(_mm_add_epi32(_mm_madd_epi16(_mm_unpacklo_epi16(a, b), k01),
                                                    _mm_madd_epi16(_mm_unpacklo_epi16(c, d), k23)), round);
    const __m128i high = _mm_add_epi32(_mm_add_epi32(_mm_madd_epi16(_mm_unpackhi_epi16(a, b), k01),
                                                     _mm_madd_epi16(_mm_unpackhi_epi16(c, d), k23)), round);
    const __m128i words = _mm_packs_epi32(_mm_srai_epi32(low, kShift), _mm_srai_epi32(high, kShift));
    _mm_storel_epi64(reinterpret_cast<__m128i *>(out + i), _mm_packus_epi16(words, words));
  }
#endif
  for (; i < count; i++) out[i] = clipped(rows, k, i);
}

// One region: the horizontal samples of every input row it reads (rounded, not clipped, as
// bicubic_unsigned_int keeps them), then each output row from four of them.
int generate(VipsRegion *out, void *seq, void *, void *b, gboolean *) {
  auto *ir = static_cast<VipsRegion *>(seq);
  const Enlargement &e = *static_cast<const Enlargement *>(b);
  const VipsRect &r = out->valid;
  int left, right, top, bottom;
  e.across.span(r.left, r.left + r.width, left, right);
  e.down.span(r.top, r.top + r.height, top, bottom);
  VipsRect need{left, top, right - left + 1, bottom - top + 1};
  if (vips_region_prepare(ir, &need)) return -1;

  // Each row is read from a copy with its edge pixels repeated, from the first tap of the first
  // sample to the last tap of the last, plus a vector load's slack.
  const int start = e.across.first[r.left], end = e.across.first[r.left + r.width - 1] + 4;
  static thread_local std::vector<uint8_t> padded;
  static thread_local std::vector<int> offsets;
  static thread_local std::vector<int16_t> samples;
  padded.resize(size_t(end - start) * kBands + 16);
  offsets.resize(size_t(r.width));
  for (int x = 0; x < r.width; x++) offsets[x] = (e.across.first[r.left + x] - start) * kBands;
  const size_t stride = size_t(r.width) * kBands;
  samples.resize(stride * need.height + 1);
  for (int y = 0; y < need.height; y++) {
    pad_row(VIPS_REGION_ADDR(ir, left, top + y) - size_t(left) * kBands, left, right, start, end, padded.data());
    sample_row(padded.data(), offsets.data(), &e.across.taps[r.left], samples.data() + stride * y, r.width);
  }
  for (int y = r.top; y < r.top + r.height; y++) {
    const int16_t *rows[4];
    for (int k = 0; k < 4; k++) rows[k] = samples.data() + stride * (std::clamp(e.down.first[y] + k, top, bottom) - top);
    combine_rows(rows, e.down.taps[y], VIPS_REGION_ADDR(out, r.left, y), int(stride));
  }
  return 0;
}

}  // namespace

VImage resize_up_bicubic(const VImage &in, double hscale, double vscale) {
  // vips__transform_calc_inverse of the diagonal matrix, and the size vips_affine gives (its
  // bounding box, rounded to nearest).
  const double inverse = 1.0 / (hscale * vscale);
  auto *state = new Enlargement{plan_axis(in.width(), int(hscale * in.width() + 0.5), inverse * vscale),
                                plan_axis(in.height(), int(vscale * in.height() + 0.5), inverse * hscale)};
  VipsImage *source = in.get_image();
  VipsImage *out = vips_image_new();
  g_object_set_data_full(G_OBJECT(out), "matte-enlargement", state, [](gpointer p) { delete static_cast<Enlargement *>(p); });
  g_object_ref(source);
  g_object_set_data_full(G_OBJECT(out), "matte-enlarge-input", source, g_object_unref);
  if (vips_image_pipelinev(out, VIPS_DEMAND_STYLE_FATSTRIP, source, nullptr)) {
    g_object_unref(out);
    throw vips::VError();
  }
  out->Xsize = state->across.out_size;
  out->Ysize = state->down.out_size;
  if (vips_image_generate(out, vips_start_one, generate, vips_stop_one, source, state)) {
    g_object_unref(out);
    throw vips::VError();
  }
  vips_reorder_margin_hint(out, 4);
  return VImage(out);
}

}  // namespace matte
