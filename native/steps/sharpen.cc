// sharpen: libvips' unsharp mask (vips_sharpen: sigma, and m1 and m2, the amounts for flat and for
// jagged areas, with its thresholds x1 2, y2 10, y3 20) on the luma of the 8-bit sRGB colour bands
// instead of L* of LabS, 255 levels of luma standing for L*'s 100, the change of luma added to
// every colour band; alpha is left as it is. The same curve without the two colour-space
// conversions, which cost more than the resize before them, and in one pass of its own (luma, the
// Gaussian of it, the table) where libvips' operations took eight (bench/README.md, "Responsive
// images").
#include "../matte/floats4.h"
#include "alpha.h"
#include "steps.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

using vips::VImage;

namespace matte {

namespace {

// vips_sharpen's fixed settings, in L* units.
constexpr double kFlatLimit = 2;       // x1: differences below it are flat, above it jagged
constexpr double kMostBrighter = 10;   // y2
constexpr double kMostDarker = 20;     // y3
constexpr double kLevelsPerL = 2.55;   // 8-bit luma levels for one unit of L*
// The table's index: luma - blurred luma + 255.
constexpr int kTableSize = 511;
// The clip table's index: a level plus its change, + kClipOffset (the changes reach 51 levels
// down, 26 up).
constexpr int kClipOffset = 64;
// The rows a region of the sharpened image is made in.
constexpr int kRows = 64;
constexpr int kClipSize = 256 + 2 * kClipOffset;
static_assert(kMostDarker * kLevelsPerL < kClipOffset && kMostBrighter * kLevelsPerL < kClipOffset);

// What every region of a sharpened image is made with, kept in the image's own memory.
struct Sharpening {
  int radius;               // the Gaussian's half width: the margin read around a region
  float weights;            // its taps' sum
  int16_t table[kTableSize];
  uint8_t clip[kClipSize];  // clip[v + kClipOffset]: v clipped to 0..255
  float taps[1];            // 2 radius + 1 of them (allocated with the struct)
};

// out[x] = sum over k of taps[k] * in[x + k * step], x in 0..n-1, four at a time (floats: exact
// for these integer sums of one pass, within a millionth for two).
void weighted_sum(const float *in, size_t step, const float *taps, int count, float *out, int n) {
  int x = 0;
  for (; x + 4 <= n; x += 4) {
    Floats4 sum = splat4(0);
    for (int k = 0; k < count; k++) sum += splat4(taps[k]) * load4(in + x + size_t(k) * step);
    store4(out + x, sum);
  }
  for (; x < n; x++) {
    float sum = 0;
    for (int k = 0; k < count; k++) sum += taps[k] * in[x + size_t(k) * step];
    out[x] = sum;
  }
}

// One region: the luma of the region and its margin, its Gaussian (rows, then columns, divided
// once at the end), then each colour band plus the table's change for luma - blurred luma,
// clipped to 0..255. The input is the image extended by `radius` on every side (its edge pixels
// copied), so region (x, y) of the output reads (x, y) of it, wider and taller.
int sharpen_generate(VipsRegion *out, void *seq, void *, void *b, gboolean *) {
  VipsRegion *in = static_cast<VipsRegion *>(seq);
  const Sharpening &s = *static_cast<const Sharpening *>(b);
  const VipsRect *r = &out->valid;
  const int radius = s.radius, taps = 2 * radius + 1, w = r->width, h = r->height, ww = w + 2 * radius, wh = h + 2 * radius;
  VipsRect need{r->left, r->top, ww, wh};
  if (vips_region_prepare(in, &need)) return -1;
  const int bands = out->im->Bands;
  static thread_local std::vector<float> buffers;
  buffers.resize(size_t(ww) * wh + size_t(w) * wh + size_t(w));
  float *luma = buffers.data(), *across = luma + size_t(ww) * wh, *blurred = across + size_t(w) * wh;
  for (int y = 0; y < wh; y++) {
    const uint8_t *p = VIPS_REGION_ADDR(in, r->left, r->top + y);
    float *row = luma + size_t(y) * ww;
    if (bands >= 3)
      for (int x = 0; x < ww; x++, p += bands) row[x] = float((13933 * p[0] + 46871 * p[1] + 4732 * p[2] + 32768) >> 16);
    else
      for (int x = 0; x < ww; x++, p += bands) row[x] = p[0];
  }
  for (int y = 0; y < wh; y++) weighted_sum(luma + size_t(y) * ww, 1, s.taps, taps, across + size_t(y) * w, w);
  const float scale = 1.0f / (s.weights * s.weights);
  static thread_local std::vector<int32_t> indexes;
  indexes.resize(size_t(w));
  int32_t *index = indexes.data();
  for (int y = 0; y < h; y++) {
    weighted_sum(across + size_t(y) * w, size_t(w), s.taps, taps, blurred, w);
    const float *centre = luma + size_t(y + radius) * ww + radius;
    // luma - round(blurred luma), clamped to -255..255, + 255: four at a time, then the rest.
    int x = 0;
    for (; x + 4 <= w; x += 4) {
      const Ints4 blur = __builtin_convertvector(load4(blurred + x) * splat4(scale) + splat4(0.5f), Ints4);
      Ints4 difference = __builtin_convertvector(load4(centre + x), Ints4) - blur;
      difference = difference < -255 ? Ints4{-255, -255, -255, -255} : difference;
      difference = difference > 255 ? Ints4{255, 255, 255, 255} : difference;
      difference += 255;
      std::memcpy(index + x, &difference, sizeof difference);
    }
    for (; x < w; x++) index[x] = std::clamp(int(centre[x]) - int(blurred[x] * scale + 0.5f), -255, 255) + 255;
    const uint8_t *p = VIPS_REGION_ADDR(in, r->left + radius, r->top + radius + y);
    uint8_t *q = VIPS_REGION_ADDR(out, r->left, r->top + y);
    if (bands == 3)
      for (x = 0; x < w; x++, p += 3, q += 3) {
        const uint8_t *clip = s.clip + kClipOffset + s.table[index[x]];
        q[0] = clip[p[0]], q[1] = clip[p[1]], q[2] = clip[p[2]];
      }
    else
      for (x = 0; x < w; x++) {
        const uint8_t *clip = s.clip + kClipOffset + s.table[index[x]];
        for (int c = 0; c < bands; c++) *q++ = clip[*p++];
      }
  }
  return 0;
}

// The change of luma for each difference between a pixel's luma and its blurred luma, in levels.
void fill_table(int16_t *table, const Step &step) {
  for (int i = 0; i < kTableSize; i++) {
    const double v = (i - 255) / kLevelsPerL;
    double y = v < -kFlatLimit  ? (v + kFlatLimit) * step.jagged - kFlatLimit * step.flat
               : v < kFlatLimit ? v * step.flat
                                : (v - kFlatLimit) * step.jagged + kFlatLimit * step.flat;
    y = std::clamp(y, -kMostDarker, kMostBrighter);
    table[i] = int16_t(std::lround(y * kLevelsPerL));
  }
}

// As vips_sharpen: an integer Gaussian, cut where it falls under 20% of its peak.
VImage gaussian_mask(double sigma) {
  return VImage::gaussmat(sigma, 0.2, VImage::option()->set("separable", true)->set("precision", VIPS_PRECISION_INTEGER));
}

// `rgb` (8-bit colour bands) sharpened: a lazy image whose regions sharpen_generate makes.
VImage sharpened(const VImage &rgb, const Step &step) {
  const VImage mask = gaussian_mask(step.sigma);
  const int taps = mask.width(), radius = taps / 2;
  const VImage extended =
      rgb.embed(radius, radius, rgb.width() + 2 * radius, rgb.height() + 2 * radius, VImage::option()->set("extend", VIPS_EXTEND_COPY));
  VipsImage *out = vips_image_new();
  VImage result(out);  // owns it from here, on an error too
  VipsImage *input = extended.get_image();
  VipsImage *inputs[] = {input, nullptr};
  if (vips_image_pipeline_array(out, VIPS_DEMAND_STYLE_FATSTRIP, inputs)) throw vips::VError();
  out->Xsize = rgb.width();
  out->Ysize = rgb.height();
  // The input lives as long as the output (unreferenced when it closes); the settings in its memory.
  g_object_ref(input);
  vips_object_local(out, input);
  auto *s = static_cast<Sharpening *>(vips_malloc(VIPS_OBJECT(out), sizeof(Sharpening) + sizeof(float) * size_t(taps)));
  if (!s) throw vips::VError();
  s->radius = radius;
  s->weights = 0;
  const VImage coefficients = mask.copy_memory();
  for (int k = 0; k < taps; k++) {
    s->taps[k] = float(coefficients.getpoint(k, 0)[0]);
    s->weights += s->taps[k];
  }
  fill_table(s->table, step);
  for (int i = 0; i < kClipSize; i++) s->clip[i] = uint8_t(std::clamp(i - kClipOffset, 0, 255));
  if (vips_image_generate(out, vips_start_one, sharpen_generate, vips_stop_one, input, s)) throw vips::VError();
  // Regions of kRows rows: each reads 2 radius rows more than it makes, a share that falls as they grow.
  return result.linecache(VImage::option()->set("tile_height", kRows)->set("access", VIPS_ACCESS_SEQUENTIAL)->set("threaded", true));
}

VImage sharpen(const VImage &in, const Step &step) {
  if (step.sigma <= 0) return in;
  return map_colour(in, [&](const VImage &colour) { return sharpened(colour.cast(VIPS_FORMAT_UCHAR), step); });
}

}  // namespace

void read_sharpen(const PlanFields &fields, Step &step) {
  step.sigma = fields.number("sigma", 0, kMaxSharpenSigma, 0);
  step.flat = fields.number("flat", 0, kMaxSharpenAmount, kDefaultSharpenFlat);
  step.jagged = fields.number("jagged", 0, kMaxSharpenAmount, kDefaultSharpenJagged);
}

void run_sharpen(Frames &frames, const Step &step, const StepContext &context) {
  // Its regions of kRows rows read 2 radius rows more, which the steps before compute again: a
  // small share for the usual radius, cheaper than computing the image into memory first and
  // encoding it after; past an eighth the image is materialised.
  if (step.sigma > 0 && 2 * (gaussian_mask(step.sigma).width() / 2) > kRows / 8) materialise(frames, context.budget);
  frames.apply([&](const VImage &image) { return sharpen(image, step); });
  // A convolution: a step reading regions with overlaps after it would compute it again for each.
  if (step.sigma > 0) frames.lazy_neighbourhood = true;
}

}  // namespace matte
