#include "reduce.h"

#include "fixed_point.h"

#include <vips/vips.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

using vips::VImage;

namespace matte {

namespace {

using namespace resample;

constexpr double kGap = 2.0;                       // vips_resize's default: a box shrink first past 2x a side
constexpr int kMaxPoints = 2000;                   // reduceh/reducev refuse larger masks

// libvips 8.14's calculate_coefficients_lanczos with a = 3: n taps, normalised to sum 1.
void lanczos3_mask(std::vector<double> &c, double shrink, double x) {
  const int n = int(c.size());
  const double half = x + n / 2.0 - 1;
  double sum = 0;
  for (int i = 0; i < n; i++) {
    const double xp = (i - half) / shrink;
    double l;
    if (xp == 0.0) l = 1.0;
    else if (xp < -3 || xp > 3) l = 0.0;
    else l = 3.0 * std::sin(M_PI * xp) * std::sin(M_PI * xp / 3.0) / (M_PI * M_PI * xp * xp);
    c[i] = l;
    sum += l;
  }
  for (double &v : c) v /= sum;
}

// One axis of a reduction: for each output sample, the input index of its first tap (before the
// edge is repeated) and its taps' coefficients, as pairs of int16 for the vector loops (an odd
// mask gets a last tap of 0).
struct ReduceAxis {
  int in_size = 0, out_size = 0, n = 0, pairs = 0;
  std::vector<int> first;
  std::vector<int32_t> coefficients;  // `pairs` a sample: low 16 bits tap 2j, high 16 bits tap 2j + 1

  // The input indices that output samples [from, to) read, edges repeated: [lo, hi].
  void span(int from, int to, int &lo, int &hi) const {
    lo = std::clamp(first[from], 0, in_size - 1);
    hi = std::clamp(first[to - 1] + n - 1, 0, in_size - 1);
  }
};

// reducev/reduceh's build in libvips 8.14 for `shrink` (>= 1, after its box pre-shrink, of which
// `extra` is the output's overhang in input pixels): the mask size, the offset that centres the
// samples, and the table entry each sample takes.
ReduceAxis plan_axis(int in_size, int out_size, double shrink, double extra) {
  ReduceAxis axis;
  axis.in_size = in_size;
  axis.out_size = out_size;
  axis.n = int(2 * std::rint(3 * shrink) + 1);
  if (axis.n > kMaxPoints) throw std::runtime_error("resize: reduce factor too large");
  axis.pairs = (axis.n + 1) / 2;
  const double offset = (1 + extra) / 2.0 - 1;
  // The input as libvips embeds it: ceil(n / 2) - 1 copies of the edge before its first pixel.
  const int margin = int(std::ceil(axis.n / 2.0)) - 1;

  std::vector<int> table((kTableSteps + 1) * axis.n);
  std::vector<double> mask(axis.n);
  for (int t = 0; t <= kTableSteps; t++) {
    lanczos3_mask(mask, shrink, double(float(t) / kTableSteps));
    for (int i = 0; i < axis.n; i++) table[t * axis.n + i] = int(mask[i] * VIPS_INTERPOLATE_SCALE);
  }

  axis.first.resize(out_size);
  axis.coefficients.assign(size_t(out_size) * axis.pairs, 0);
  for (int o = 0; o < out_size; o++) {
    const double position = (o + 0.5) * shrink - 0.5 - offset;
    const int index = int(position);
    const int step = table_step(position);
    axis.first[o] = index - margin;
    const int *taps = &table[step * axis.n];
    int32_t *pairs = &axis.coefficients[size_t(o) * axis.pairs];
    for (int i = 0; i < axis.n; i += 2) pairs[i / 2] = tap_pair(taps[i], i + 1 < axis.n ? taps[i + 1] : 0);
  }
  return axis;
}

inline uint8_t to_pixel(int32_t sum) {
  return uint8_t(std::clamp((sum + (1 << (kShift - 1))) >> kShift, 0, 255));
}

inline int16_t low_tap(int32_t pair) { return int16_t(uint32_t(pair) & 0xffff); }
inline int16_t high_tap(int32_t pair) { return int16_t(uint32_t(pair) >> 16); }

#if defined(__x86_64__)
// As reduce_rows' SSE2 loop, 32 samples at a time: unpack, madd and pack all work within each
// 128-bit half, so the halves come out in order.
__attribute__((target("avx2"))) int reduce_rows_avx2(const uint8_t *const *rows, const int32_t *pairs, int npairs,
                                                     uint8_t *out, int count) {
  const __m256i zero = _mm256_setzero_si256();
  const __m256i round = _mm256_set1_epi32(1 << (kShift - 1));
  int x = 0;
  for (; x + 32 <= count; x += 32) {
    __m256i a0 = round, a1 = round, a2 = round, a3 = round;
    for (int j = 0; j < npairs; j++) {
      const __m256i r0 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(rows[2 * j] + x));
      const __m256i r1 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(rows[2 * j + 1] + x));
      const __m256i k = _mm256_set1_epi32(pairs[j]);
      const __m256i lo = _mm256_unpacklo_epi8(r0, r1), hi = _mm256_unpackhi_epi8(r0, r1);
      a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_unpacklo_epi8(lo, zero), k));
      a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_unpackhi_epi8(lo, zero), k));
      a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(_mm256_unpacklo_epi8(hi, zero), k));
      a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(_mm256_unpackhi_epi8(hi, zero), k));
    }
    const __m256i first = _mm256_packs_epi32(_mm256_srai_epi32(a0, kShift), _mm256_srai_epi32(a1, kShift));
    const __m256i last = _mm256_packs_epi32(_mm256_srai_epi32(a2, kShift), _mm256_srai_epi32(a3, kShift));
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(out + x), _mm256_packus_epi16(first, last));
  }
  return x;
}

#endif

// Vertical: out[x] from the same x of 2 x pairs rows (the last one may be a copy, with a 0 tap).
void reduce_rows(const uint8_t *const *rows, const int32_t *pairs, int npairs, uint8_t *out, int count) {
  int x = 0;
#if defined(__x86_64__)
  if (has_avx2) x = reduce_rows_avx2(rows, pairs, npairs, out, count);
  const __m128i zero = _mm_setzero_si128();
  const __m128i round = _mm_set1_epi32(1 << (kShift - 1));
  for (; x + 16 <= count; x += 16) {
    __m128i a0 = round, a1 = round, a2 = round, a3 = round;
    for (int j = 0; j < npairs; j++) {
      const __m128i r0 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(rows[2 * j] + x));
      const __m128i r1 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(rows[2 * j + 1] + x));
      const __m128i k = _mm_set1_epi32(pairs[j]);
      const __m128i lo = _mm_unpacklo_epi8(r0, r1), hi = _mm_unpackhi_epi8(r0, r1);
      a0 = _mm_add_epi32(a0, _mm_madd_epi16(_mm_unpacklo_epi8(lo, zero), k));
      a1 = _mm_add_epi32(a1, _mm_madd_epi16(_mm_unpackhi_epi8(lo, zero), k));
      a2 = _mm_add_epi32(a2, _mm_madd_epi16(_mm_unpacklo_epi8(hi, zero), k));
      a3 = _mm_add_epi32(a3, _mm_madd_epi16(_mm_unpackhi_epi8(hi, zero), k));
    }
    const __m128i first8 = _mm_packs_epi32(_mm_srai_epi32(a0, kShift), _mm_srai_epi32(a1, kShift));
    const __m128i last8 = _mm_packs_epi32(_mm_srai_epi32(a2, kShift), _mm_srai_epi32(a3, kShift));
    _mm_storeu_si128(reinterpret_cast<__m128i *>(out + x), _mm_packus_epi16(first8, last8));
  }
#endif
  for (; x < count; x++) {
    int32_t sum = 0;
    for (int j = 0; j < npairs; j++) sum += low_tap(pairs[j]) * rows[2 * j][x] + high_tap(pairs[j]) * rows[2 * j + 1][x];
    out[x] = to_pixel(sum);
  }
}

// Horizontal, 3 bands: out pixel x from 2 x pairs pixels at row + offsets[x] x 3 (the row has at
// least one pixel and 2 bytes after its last tap).
void reduce_pixels_plain(const uint8_t *row, const int *offsets, const int32_t *coefficients, int npairs, uint8_t *out,
                         int count) {
  for (int x = 0; x < count; x++) {
    const uint8_t *p = row + offsets[x] * kBands;
    const int32_t *pairs = coefficients + size_t(x) * npairs;
    int32_t r = 0, g = 0, b = 0;
    for (int j = 0; j < npairs; j++, p += 2 * kBands) {
      const int32_t k0 = low_tap(pairs[j]), k1 = high_tap(pairs[j]);
      r += k0 * p[0] + k1 * p[3];
      g += k0 * p[1] + k1 * p[4];
      b += k0 * p[2] + k1 * p[5];
    }
    out[x * kBands] = to_pixel(r);
    out[x * kBands + 1] = to_pixel(g);
    out[x * kBands + 2] = to_pixel(b);
  }
}

#if defined(__x86_64__)
__attribute__((target("ssse3"))) void reduce_pixels_ssse3(const uint8_t *row, const int *offsets,
                                                         const int32_t *coefficients, int npairs, uint8_t *out,
                                                         int count) {
  // Two neighbouring pixels' bytes as 16-bit lanes: r0 r1 g0 g1 b0 b1 0 0.
  const __m128i spread = _mm_setr_epi8(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1);
  const __m128i round = _mm_set1_epi32(1 << (kShift - 1));
  for (int x = 0; x < count; x++) {
    const uint8_t *p = row + offsets[x] * kBands;
    const int32_t *pairs = coefficients + size_t(x) * npairs;
    __m128i sum = round;
    for (int j = 0; j < npairs; j++, p += 2 * kBands) {
      const __m128i two = _mm_shuffle_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(p)), spread);
      sum = _mm_add_epi32(sum, _mm_madd_epi16(two, _mm_set1_epi32(pairs[j])));
    }
    const __m128i shifted = _mm_srai_epi32(sum, kShift);
    const __m128i bytes = _mm_packus_epi16(_mm_packs_epi32(shifted, shifted), shifted);
    const uint32_t rgbx = uint32_t(_mm_cvtsi128_si32(bytes));
    std::memcpy(out + x * kBands, &rgbx, kBands);
  }
}

// As reduce_pixels_ssse3, two output pixels at once, one in each 128-bit half.
__attribute__((target("avx2"))) void reduce_pixels_avx2(const uint8_t *row, const int *offsets,
                                                       const int32_t *coefficients, int npairs, uint8_t *out,
                                                       int count) {
  const __m256i spread = _mm256_broadcastsi128_si256(_mm_setr_epi8(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1));
  const __m256i round = _mm256_set1_epi32(1 << (kShift - 1));
  int x = 0;
  for (; x + 2 <= count; x += 2) {
    const uint8_t *p = row + offsets[x] * kBands, *q = row + offsets[x + 1] * kBands;
    const int32_t *pairs = coefficients + size_t(x) * npairs, *next = pairs + npairs;
    __m256i sum = round;
    for (int j = 0; j < npairs; j++, p += 2 * kBands, q += 2 * kBands) {
      const __m256i both = _mm256_inserti128_si256(
          _mm256_castsi128_si256(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(p))),
          _mm_loadl_epi64(reinterpret_cast<const __m128i *>(q)), 1);
      const __m256i k = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_set1_epi32(pairs[j])), _mm_set1_epi32(next[j]), 1);
      sum = _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_shuffle_epi8(both, spread), k));
    }
    const __m256i shifted = _mm256_srai_epi32(sum, kShift);
    const __m256i bytes = _mm256_packus_epi16(_mm256_packs_epi32(shifted, shifted), shifted);
    const uint32_t first = uint32_t(_mm256_cvtsi256_si32(bytes));
    const uint32_t second = uint32_t(_mm_cvtsi128_si32(_mm256_extracti128_si256(bytes, 1)));
    std::memcpy(out + x * kBands, &first, kBands);
    std::memcpy(out + (x + 1) * kBands, &second, kBands);
  }
  if (x < count) reduce_pixels_ssse3(row, offsets + x, coefficients + size_t(x) * npairs, npairs, out + x * kBands, count - x);
}

#endif

void reduce_pixels(const uint8_t *row, const int *offsets, const int32_t *coefficients, int npairs, uint8_t *out,
                   int count) {
#if defined(__x86_64__)
  if (has_avx2) return reduce_pixels_avx2(row, offsets, coefficients, npairs, out, count);
  if (has_ssse3) return reduce_pixels_ssse3(row, offsets, coefficients, npairs, out, count);
#endif
  reduce_pixels_plain(row, offsets, coefficients, npairs, out, count);
}

int generate_vertical(VipsRegion *out, void *seq, void *, void *b, gboolean *) {
  auto *ir = static_cast<VipsRegion *>(seq);
  const ReduceAxis &axis = *static_cast<const ReduceAxis *>(b);
  const VipsRect &r = out->valid;
  int lo, hi;
  axis.span(r.top, r.top + r.height, lo, hi);
  VipsRect s{r.left, lo, r.width, hi - lo + 1};
  if (vips_region_prepare(ir, &s)) return -1;
  std::vector<const uint8_t *> rows(2 * axis.pairs);
  for (int y = r.top; y < r.top + r.height; y++) {
    for (int i = 0; i < 2 * axis.pairs; i++) {
      const int row = std::clamp(axis.first[y] + std::min(i, axis.n - 1), 0, axis.in_size - 1);
      rows[i] = VIPS_REGION_ADDR(ir, r.left, row);
    }
    reduce_rows(rows.data(), &axis.coefficients[size_t(y) * axis.pairs], axis.pairs, VIPS_REGION_ADDR(out, r.left, y),
                r.width * kBands);
  }
  return 0;
}

int generate_horizontal(VipsRegion *out, void *seq, void *, void *b, gboolean *) {
  auto *ir = static_cast<VipsRegion *>(seq);
  const ReduceAxis &axis = *static_cast<const ReduceAxis *>(b);
  const VipsRect &r = out->valid;
  int lo, hi;
  axis.span(r.left, r.left + r.width, lo, hi);
  VipsRect s{lo, r.top, hi - lo + 1, r.height};
  if (vips_region_prepare(ir, &s)) return -1;
  // Each row is read from a copy with its edge pixels repeated, so no tap needs a bound check:
  // from the first tap of the first sample to past the last (pairs round up), plus load slack.
  const int start = axis.first[r.left];
  const int end = axis.first[r.left + r.width - 1] + 2 * axis.pairs;
  std::vector<uint8_t> padded(size_t(end - start) * kBands + 8);
  std::vector<int> offsets(r.width);
  for (int x = 0; x < r.width; x++) offsets[x] = axis.first[r.left + x] - start;
  // What the region holds is [lo, hi]: pixels past hi are the image's edge repeated, or (inside the
  // image) only ever read by the 0 tap that rounds an odd mask up to pairs.
  for (int y = r.top; y < r.top + r.height; y++) {
    pad_row(VIPS_REGION_ADDR(ir, lo, y) - size_t(lo) * kBands, lo, hi, start, end, padded.data());
    reduce_pixels(padded.data(), offsets.data(), &axis.coefficients[size_t(r.left) * axis.pairs], axis.pairs,
                  VIPS_REGION_ADDR(out, r.left, y), r.width);
  }
  return 0;
}

// One axis as a lazy libvips image over `in` (as vips_reducev_raw builds its output).
VImage reduce_axis(const VImage &in, ReduceAxis axis, bool vertical) {
  VipsImage *source = in.get_image();
  VipsImage *out = vips_image_new();
  auto *state = new ReduceAxis(std::move(axis));
  g_object_set_data_full(G_OBJECT(out), "matte-reduce-axis", state, [](gpointer p) { delete static_cast<ReduceAxis *>(p); });
  g_object_ref(source);
  g_object_set_data_full(G_OBJECT(out), "matte-reduce-input", source, g_object_unref);
  if (vips_image_pipelinev(out, VIPS_DEMAND_STYLE_THINSTRIP, source, nullptr)) {
    g_object_unref(out);
    throw vips::VError();
  }
  if (vertical) out->Ysize = state->out_size;
  else out->Xsize = state->out_size;
  if (vips_image_generate(out, vips_start_one, vertical ? generate_vertical : generate_horizontal, vips_stop_one,
                          source, state)) {
    g_object_unref(out);
    throw vips::VError();
  }
  vips_reorder_margin_hint(out, state->n);
  return VImage(out);
}

// vips_resize's reducev (vertical) or reduceh with kernel lanczos3 and gap 2, by `shrink` >= 1.
VImage reduce(const VImage &in, double shrink, bool vertical) {
  const int in_size = vertical ? in.height() : in.width();
  const int out_size = int(double(in_size) / shrink + 0.5);
  double extra = out_size * shrink - in_size;
  const int box = std::max(1, int(std::floor(double(in_size) / out_size / kGap)));
  VImage source = in;
  if (box > 1) {
    source = vertical ? in.shrinkv(box, VImage::option()->set("ceil", true))
                      : in.shrinkh(box, VImage::option()->set("ceil", true));
    shrink /= box;
    extra /= box;
  }
  if (shrink == 1.0) return source;
  const int size = vertical ? source.height() : source.width();
  VImage out = reduce_axis(source, plan_axis(size, out_size, shrink, extra), vertical);
  // As reducev: a line cache behind a vertical reduction of a sequential input, so that threads
  // working on neighbouring strips never ask the decoder for rows it has already passed.
  if (vertical && vips_image_get_typeof(out.get_image(), VIPS_META_SEQUENTIAL))
    out = out.sequential(VImage::option()->set("tile_height", 10));
  return out;
}

}  // namespace

bool reducible_rgb8(const VImage &image) {
  return image.format() == VIPS_FORMAT_UCHAR && image.bands() == kBands && image.coding() == VIPS_CODING_NONE &&
         !image.has_alpha();
}

VImage resize_down_lanczos3(const VImage &in, double hscale, double vscale) {
  // As vips_resize: neither axis below one pixel; vertical first, then horizontal.
  hscale = std::max(hscale, 1.0 / in.width());
  vscale = std::max(vscale, 1.0 / in.height());
  VImage out = in;
  if (vscale < 1.0) out = reduce(out, 1.0 / vscale, true);
  if (hscale < 1.0) out = reduce(out, 1.0 / hscale, false);
  return out;
}

}  // namespace matte
