// The transition is a few pixels wide along the subject's outline, so finding it must cost little
// per pixel of the image, and the pair search little per pair. Every shortcut below is exact: the
// matte is byte-identical to the plain loops (every pixel tested, every pair scored, in order).
#include "edge_colour.h"

#include "floats4.h"
#include "refine_bands.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

namespace matte {

namespace {

// The alpha that best explains I as a blend of F and B, and how much it can be trusted (0..1).
struct Blend {
  float alpha, trust;
};
Blend blend(const uint8_t *I, const float *F, const float *B, const EdgeColourParams &p) {
  float dot = 0, len2 = 0;
  for (int c = 0; c < 3; c++) {
    float d = F[c] - B[c];
    dot += (I[c] - B[c]) * d;
    len2 += d * d;
  }
  if (len2 < 1) return {0, 0};
  float a = std::clamp(dot / len2, 0.0f, 1.0f);
  float residual2 = 0;
  for (int c = 0; c < 3; c++) {
    float d = I[c] - (B[c] + a * (F[c] - B[c]));
    residual2 += d * d;
  }
  float fits = std::max(0.0f, 1.0f - std::sqrt(residual2) / std::max(1.0f, p.fit));
  float separated = std::min(1.0f, std::sqrt(len2) / std::max(1.0f, p.separation));
  return {a, fits * separated};
}

// A pixel crosses when one of its 4 neighbours lies on the other side of 128 (`up`, `down`: the
// rows above and below, null at the image's border).
inline bool crosses(const uint8_t *row, const uint8_t *up, const uint8_t *down, int x, int W) {
  const bool in = row[x] >= 128;
  return (x + 1 < W && (row[x + 1] >= 128) != in) || (x > 0 && (row[x - 1] >= 128) != in) ||
         (down && (down[x] >= 128) != in) || (up && (up[x] >= 128) != in);
}

inline uint64_t load8(const uint8_t *p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Runs [first, last] of pixels, in order, disjoint and not touching.
using Runs = std::vector<std::pair<int, int>>;

inline void add_run(Runs &runs, int first, int last) {
  if (!runs.empty() && first <= runs.back().second + 1) runs.back().second = std::max(runs.back().second, last);
  else runs.emplace_back(first, last);
}

// The pixels of a row within d of a crossing pixel of that row. Side of 128 is a byte's top bit,
// so 8 pixels whose own bytes, their left and right neighbours' and the bytes above and below all
// have the same top bit hold no crossing: they are passed over a word at a time (most of an image).
void crossing_runs(const uint8_t *row, const uint8_t *up, const uint8_t *down, int W, int d, Runs &runs) {
  runs.clear();
  auto at = [&](int x) {
    if (crosses(row, up, down, x, W)) add_run(runs, std::max(0, x - d), std::min(W - 1, x + d));
  };
  if (W > 0) at(0);
  // Rows above and below that do not exist are read as the row itself (the same side: no crossing).
  const uint8_t *u = up ? up : row, *dn = down ? down : row;
  constexpr uint64_t kTop = 0x8080808080808080ull;
  int x = 1;
  for (; x + 9 <= W; x += 8) {  // bytes x - 1 .. x + 8
    const uint64_t c = load8(row + x), l = load8(row + x - 1), r = load8(row + x + 1), a = load8(u + x),
                   b = load8(dn + x);
    if (((c & l & r & a & b) & kTop) == kTop || ((c | l | r | a | b) & kTop) == 0) continue;
    for (int k = x; k < x + 8; k++) at(k);
  }
  for (; x < W; x++) at(x);
}

// The samples of a window, as the pair search reads them: colour minus the pixel's own by
// component, and its squared length, as floats (exact: integers below 2^24), four at a time.
struct Samples {
  float dx[84] = {}, dy[84] = {}, dz[84] = {}, dd[84] = {};  // lanes past n are read, never kept
  int n = 0;
  void add(const uint8_t *c, const uint8_t *I) {
    if (n >= 81) return;
    const int x = int(c[0]) - I[0], y = int(c[1]) - I[1], z = int(c[2]) - I[2];
    dx[n] = float(x), dy[n] = float(y), dz[n] = float(z), dd[n] = float(x * x + y * y + z * z);
    n++;
  }
  // The sample's colour, as blend() takes it.
  void colour(int i, const uint8_t *I, float *c) const {
    c[0] = I[0] + dx[i], c[1] = I[1] + dy[i], c[2] = I[2] + dz[i];
  }
};

// Every foreground sample against every background sample: the pair whose blend lies closest to I
// (as the sampling-based matting methods choose); the first in order among equals.
//
// A pair is skipped when it cannot beat the best so far (the choice only changes on a strictly
// higher trust), from integer arithmetic alone, exact: with u = F - I and v = B - I, |F - B|^2 =
// |u|^2 + |v|^2 - 2 u.v and (I - B).(F - B) = |v|^2 - u.v, so the pair's separation and the
// distance of I from the segment B..F (the residual of blend()) need one dot product. Its trust is
// at most its separation term (fits <= 1), and its fits term is at most best when the residual is
// at least fit * (1 - best): the bounds keep a margin (0.1% and 0.01 colour units, against float
// rounding of ~1e-4 units) so that a skipped pair is one whose blend() would not have won. Trust 0
// pairs are skipped too (best starts at 0, not -1): a best of trust 0 leaves the pixel's value as
// it is, as no pair does.
//
// The test runs on four background samples at once in floats, where it is exact but for the
// distance of I from the segment's inside (a difference of products near 2^35), which it takes
// with a bound on its rounding: a pair it keeps is tested again in integers, as described above.
Blend best_pair(const uint8_t *I, const Samples &fg, const Samples &bg, const EdgeColourParams &p) {
  Blend best{0, 0};
  float best_score = 0;
  const double fit = std::max(1.0f, p.fit), separation = std::max(1.0f, p.separation);
  double separated_below2 = 0, reach2 = 0;
  float separated_below2_f = 0, reach2_f = 0;  // rounded towards keeping a pair
  auto bounds = [&] {
    const double s = best_score * separation;
    separated_below2 = s * s * (1 - 1e-5);
    const double reach = fit * (1 - best_score) * (1 + 1e-3) + 0.01 + fit * 1e-6;
    reach2 = reach * reach;
    separated_below2_f = float(separated_below2);
    if (separated_below2_f > separated_below2) separated_below2_f = std::nextafter(separated_below2_f, 0.0f);
    reach2_f = float(reach2);
    if (reach2_f < reach2) reach2_f = std::nextafter(reach2_f, 2 * reach2_f + 1);
  };
  bounds();
  // The integer test, exact: true when the pair cannot beat the best so far.
  auto cannot_win = [&](int f, int b) {
    const int ux = int(fg.dx[f]), uy = int(fg.dy[f]), uz = int(fg.dz[f]), vx = int(bg.dx[b]), vy = int(bg.dy[b]),
              vz = int(bg.dz[b]);
    const int uu = int(fg.dd[f]), vv = int(bg.dd[b]);
    const int uv = ux * vx + uy * vy + uz * vz;
    const int len2 = uu + vv - 2 * uv;
    if (len2 < 1) return true;  // blend() gives trust 0
    if (len2 < separated_below2) return true;
    const int dot = vv - uv;
    if (dot <= 0) return vv >= reach2;   // I is nearest B
    if (dot >= len2) return uu >= reach2;  // I is nearest F
    return double(int64_t(vv) * len2 - int64_t(dot) * dot) >= reach2 * len2;
  };
  const Floats4 lane = {0, 1, 2, 3};
  for (int f = 0; f < fg.n; f++) {
    const Floats4 ux = splat4(fg.dx[f]), uy = splat4(fg.dy[f]), uz = splat4(fg.dz[f]), uu = splat4(fg.dd[f]);
    for (int b0 = 0; b0 < bg.n; b0 += 4) {
      const Floats4 vx = load4(bg.dx + b0), vy = load4(bg.dy + b0), vz = load4(bg.dz + b0), vv = load4(bg.dd + b0);
      const Floats4 uv = ux * vx + uy * vy + uz * vz;
      const Floats4 len2 = uu + vv - (uv + uv), dot = vv - uv;
      const Floats4 reach2_4 = splat4(reach2_f);
      // Inside the segment: vv len2 - dot^2 against reach2 len2, with 2^-21 of the products'
      // size as the bound on the rounding of the difference and 2^-20 of the threshold for its own.
      const Floats4 p1 = vv * len2, p2 = dot * dot;
      const Ints4 inside_far =
          p1 - p2 >= len2 * reach2_4 * splat4(1 + 0x1p-20f) + (p1 + p2) * splat4(0x1p-21f);
      const Ints4 at_b = dot <= splat4(0), at_f = ~at_b & (dot >= len2), inside = ~(at_b | at_f);
      const Ints4 far = (at_b & (vv >= reach2_4)) | (at_f & (uu >= reach2_4)) | (inside & inside_far);
      const Ints4 keep = (lane + splat4(float(b0)) < splat4(float(bg.n))) & (len2 >= splat4(1)) &
                         (len2 >= splat4(separated_below2_f)) & ~far;
      uint64_t any[2];
      std::memcpy(any, &keep, sizeof any);
      if (!(any[0] | any[1])) continue;
      float F[3], B[3];
      fg.colour(f, I, F);
      for (int l = 0; l < 4; l++) {
        if (!keep[l] || cannot_win(f, b0 + l)) continue;
        bg.colour(b0 + l, I, B);
        const Blend e = blend(I, F, B, p);
        if (e.trust > best_score) {
          best_score = e.trust, best = e;
          bounds();
        }
      }
    }
  }
  return best;
}

// F and B as the means of the window's sure samples.
Blend mean_pair(const uint8_t *I, const uint8_t *source, const uint8_t *rgb, int W, int x0, int x1, int y0, int y1,
                const EdgeColourParams &p) {
  const int fg = p.sure, bg = 255 - p.sure;
  float F[3] = {0, 0, 0}, B[3] = {0, 0, 0};
  int nf = 0, nb = 0;
  for (int yy = y0; yy <= y1; yy++)
    for (int xx = x0; xx <= x1; xx++) {
      const size_t j = size_t(yy) * W + xx;
      const uint8_t *c = rgb + j * 3;
      if (source[j] >= fg) F[0] += c[0], F[1] += c[1], F[2] += c[2], nf++;
      else if (source[j] <= bg) B[0] += c[0], B[1] += c[1], B[2] += c[2], nb++;
    }
  if (!nf || !nb) return {0, 0};
  for (int c = 0; c < 3; c++) F[c] /= nf, B[c] /= nb;
  return blend(I, F, B, p);
}

}  // namespace

void resolve_edge_colours(uint8_t *alpha, const uint8_t *rgb, int W, int H, const EdgeColourParams &p,
                          Budget *budget) {
  if (p.radius <= 0) return;
  const int r = p.radius, fg = p.sure, bg = 255 - p.sure;
  // Samples are read from the matte before this step: the new values are kept per row and written
  // once every band is done (they are few: the transition only).
  const uint8_t *source = alpha;
  // The pixels within `wide` pixels of a change of side of 128 (not only those at 1..254: the
  // sharpened matte may have put the whole of an image's soft edge on one side), by a separable
  // dilation by a (2 wide - 1)^2 square (wide 1: the crossing pixels themselves), kept as runs of
  // pixels: first each row's crossings dilated along it, then, once every row has them, the runs
  // of the rows around merged (the dilation across rows) and re-estimated. Each pass writes only
  // its own rows (refine_bands.h).
  const int d = p.wide - 1;
  std::vector<Runs> row_runs(H);
  for_row_bands(H, [&](int first_row, int end_row) {
    for (int y = first_row; y < end_row; y++) {
      const uint8_t *row = source + size_t(y) * W;
      crossing_runs(row, y > 0 ? row - W : nullptr, y + 1 < H ? row + W : nullptr, W, d, row_runs[y]);
    }
  }, budget);
  std::vector<std::vector<std::pair<int, uint8_t>>> changes(H);
  for_row_bands(H, [&](int first_row, int end_row) {
    Runs near, merged;
    std::vector<uint8_t> sides;
    Samples fs, bs;
    for (int y = first_row; y < end_row; y++) {
      near.clear();
      for (int yy = std::max(0, y - d); yy <= std::min(H - 1, y + d); yy++)
        near.insert(near.end(), row_runs[yy].begin(), row_runs[yy].end());
      if (near.empty()) continue;
      std::sort(near.begin(), near.end());
      merged.clear();
      for (const auto &run : near) add_run(merged, run.first, run.second);
      const int y0 = std::max(0, y - r), y1 = std::min(H - 1, y + r);
      for (const auto &run : merged) {
        // Which of the window's columns hold a foreground (1) or background (2) sample: most of
        // the transition's pixels have samples of one side only, and no pair (their value stays).
        const int c0 = std::max(0, run.first - r), c1 = std::min(W - 1, run.second + r);
        sides.assign(size_t(c1 - c0 + 1), 0);
        for (int yy = y0; yy <= y1; yy++) {
          const uint8_t *s = source + size_t(yy) * W;
          for (int c = c0; c <= c1; c++) sides[c - c0] |= (s[c] >= fg ? 1 : 0) | (s[c] <= bg ? 2 : 0);
        }
        for (int x = run.first; x <= run.second; x++) {
          uint8_t both = 0;
          for (int c = std::max(0, x - r); c <= std::min(W - 1, x + r); c++) both |= sides[c - c0];
          if (both != 3) continue;
          const size_t i = size_t(y) * W + x;
          const uint8_t v = source[i];
          const int x0 = std::max(0, x - r), x1 = std::min(W - 1, x + r);
          const uint8_t *I = rgb + i * 3;
          Blend best{0, 0};
          if (!p.pairs) {
            best = mean_pair(I, source, rgb, W, x0, x1, y0, y1, p);
          } else {
            fs.n = 0, bs.n = 0;
            for (int yy = y0; yy <= y1; yy++)
              for (int xx = x0; xx <= x1; xx++) {
                const size_t j = size_t(yy) * W + xx;
                if (source[j] >= fg) fs.add(rgb + j * 3, I);
                else if (source[j] <= bg) bs.add(rgb + j * 3, I);
              }
            if (fs.n && bs.n) best = best_pair(I, fs, bs, p);
          }
          // No pair (trust 0): the value as it was.
          if (best.trust == 0) continue;
          const float a = best.trust * best.alpha + (1 - best.trust) * (v * (1.0f / 255));
          changes[y].emplace_back(x, uint8_t(std::lround(std::clamp(a, 0.0f, 1.0f) * 255)));
        }
      }
    }
  }, budget);
  for (int y = 0; y < H; y++)
    for (const auto &change : changes[y]) alpha[size_t(y) * W + change.first] = change.second;
}

}  // namespace matte
