#include "turn.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

using vips::VImage;

namespace matte {

namespace {

// What every region of a turned image is made with, kept in the image's own memory.
struct Turning {
  Turn turn;
  int in_width, in_height;
  int out_width() const { return turn.swaps() ? in_height : in_width; }
};

// The input pixel that output pixel (x, y) copies: the mirror first (on the output), then the turn.
// Affine: it holds for points past the edges too.
void source_of(const Turning &t, int x, int y, int &sx, int &sy) {
  if (t.turn.mirror) x = t.out_width() - 1 - x;
  switch (t.turn.angle) {
    case 90: sx = y, sy = t.in_height - 1 - x; return;
    case 180: sx = t.in_width - 1 - x, sy = t.in_height - 1 - y; return;
    case 270: sx = t.in_width - 1 - y, sy = x; return;
    default: sx = x, sy = y; return;
  }
}

// The input rectangle whose pixels the turn carries onto `out`: where its corners come from.
VipsRect source_rect(const Turning &t, const VipsRect &out) {
  int x0, y0, x1, y1;
  source_of(t, out.left, out.top, x0, y0);
  source_of(t, VIPS_RECT_RIGHT(&out) - 1, VIPS_RECT_BOTTOM(&out) - 1, x1, y1);
  return VipsRect{std::min(x0, x1), std::min(y0, y1), std::abs(x1 - x0) + 1, std::abs(y1 - y0) + 1};
}

// n pixels of PS bytes to q, read from p onwards `step` bytes apart.
template <int PS>
void copy_pixels(uint8_t *__restrict q, const uint8_t *__restrict p, ptrdiff_t step, int n, int ps) {
  const int bytes = PS ? PS : ps;
  for (int i = 0; i < n; i++, q += bytes, p += step) std::memcpy(q, p, size_t(bytes));
}

using CopyFn = void (*)(uint8_t *, const uint8_t *, ptrdiff_t, int, int);

CopyFn copy_for(int ps) {
  switch (ps) {
    case 1: return copy_pixels<1>;
    case 3: return copy_pixels<3>;
    case 4: return copy_pixels<4>;
    default: return copy_pixels<0>;
  }
}

// Output columns are copied in blocks of this many: down an input column (a turn by 90 or 270),
// the input lines a block reads stay in the cache for the region's next rows.
constexpr int kBlock = 64;

int turn_generate(VipsRegion *out, void *seq, void *, void *b, gboolean *) {
  VipsRegion *in = static_cast<VipsRegion *>(seq);
  const Turning &t = *static_cast<const Turning *>(b);
  const VipsRect *r = &out->valid;
  VipsRect need = source_rect(t, *r);
  if (vips_region_prepare(in, &need)) return -1;
  const int ps = VIPS_IMAGE_SIZEOF_PEL(in->im);
  const ptrdiff_t line = VIPS_REGION_LSKIP(in);
  // The input step from one output pixel to the next on a row.
  int ax, ay, bx, by;
  source_of(t, r->left, r->top, ax, ay);
  source_of(t, r->left + 1, r->top, bx, by);
  const ptrdiff_t step = ptrdiff_t(bx - ax) * ps + ptrdiff_t(by - ay) * line;
  const CopyFn copy = copy_for(ps);
  for (int left = r->left; left < VIPS_RECT_RIGHT(r); left += kBlock) {
    const int n = std::min(kBlock, VIPS_RECT_RIGHT(r) - left);
    for (int y = r->top; y < VIPS_RECT_BOTTOM(r); y++) {
      int sx, sy;
      source_of(t, left, y, sx, sy);
      copy(reinterpret_cast<uint8_t *>(VIPS_REGION_ADDR(out, left, y)), reinterpret_cast<const uint8_t *>(VIPS_REGION_ADDR(in, sx, sy)), step, n, ps);
    }
  }
  return 0;
}

}  // namespace

VImage turned(const VImage &in, Turn turn) {
  const int angle = turn.angle;
  if (angle == 0 && !turn.mirror) return in;
  // Coded pixels (LABQ, RAD) are not whole bytes a band: libvips' own operations.
  if (in.get_image()->Coding != VIPS_CODING_NONE) {
    const VImage out = angle == 0 ? in : in.rot(angle == 90 ? VIPS_ANGLE_D90 : angle == 180 ? VIPS_ANGLE_D180 : VIPS_ANGLE_D270);
    return turn.mirror ? out.flip(VIPS_DIRECTION_HORIZONTAL) : out;
  }
  VipsImage *out = vips_image_new();
  VImage result(out);  // owns it from here, on an error too
  VipsImage *input = in.get_image();
  VipsImage *inputs[] = {input, nullptr};
  // Full-width strips: a turn by 90 or 270 reads columns of its input, which is in memory.
  if (vips_image_pipeline_array(out, VIPS_DEMAND_STYLE_FATSTRIP, inputs)) throw vips::VError();
  out->Xsize = turn.swaps() ? in.height() : in.width();
  out->Ysize = turn.swaps() ? in.width() : in.height();
  // The input lives as long as the output (unreferenced when it closes); the settings in its memory.
  g_object_ref(input);
  vips_object_local(out, input);
  auto *t = static_cast<Turning *>(vips_malloc(VIPS_OBJECT(out), sizeof(Turning)));
  if (!t) throw vips::VError();
  *t = Turning{turn, in.width(), in.height()};
  if (vips_image_generate(out, vips_start_one, turn_generate, vips_stop_one, input, t)) throw vips::VError();
  return result;
}

Turn turn_of(int orientation) {
  static const Turn kTurns[9] = {{0, false}, {0, false}, {0, true}, {180, false}, {180, true}, {90, true}, {90, false}, {270, true}, {270, false}};
  return kTurns[orientation >= 1 && orientation <= 8 ? orientation : 1];
}

VipsRect turned_source(const VipsRect &out, int in_width, int in_height, Turn turn) {
  return source_rect(Turning{turn, in_width, in_height}, out);
}

VImage upright(const VImage &in, int orientation) {
  // A new image of ours whose metadata no one else reads yet: the tags can go in place.
  VImage out = turned(in, turn_of(orientation)).copy();
  vips_autorot_remove_angle(out.get_image());
  return out;
}

}  // namespace matte
