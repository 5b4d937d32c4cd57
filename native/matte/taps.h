#pragma once
// Bilinear sampling positions of a smaller grid's rows/columns for each full-resolution one, pixel
// centres aligned ((x + 0.5) * scale - 0.5): used wherever the refinement reads a model- or
// working-resolution plane at full resolution (refine.cc, foreground.cc). Not upscale.cc's: the
// refine-off matte is sampled as libvips' linear resize samples it (x * scale - 0.5), in 1/256 weights,
// to stay within one level of the libvips result it replaced.

#include <algorithm>
#include <vector>

namespace matte {

struct Taps {
  std::vector<int> i0, i1;  // the two neighbours on the smaller grid
  std::vector<float> f;     // weight of i1
};

inline Taps taps(int full, int small) {
  Taps t;
  t.i0.resize(full), t.i1.resize(full), t.f.resize(full);
  const double scale = double(small) / full;
  for (int x = 0; x < full; x++) {
    double u = std::clamp((x + 0.5) * scale - 0.5, 0.0, double(small - 1));
    int i0 = int(u);
    t.i0[x] = i0;
    t.i1[x] = std::min(i0 + 1, small - 1);
    t.f[x] = float(u - i0);
  }
  return t;
}

}  // namespace matte
