// The reference for test/engine/resample.test.ts: libvips' own vips_resize with kernel lanczos3 (what
// native/steps/resize.cc called for every downscale before native/resample/), on a PNG, written as
// a PNG. Built with the system compiler:
//
//   libvips-resize IN.png OUT.png HSCALE VSCALE
#include <vips/vips8>

#include <cstdio>
#include <cstdlib>

using vips::VImage;

int main(int argc, char **argv) {
  if (VIPS_INIT(argv[0]) || argc != 5) {
    std::fprintf(stderr, "usage: libvips-resize IN.png OUT.png HSCALE VSCALE\n");
    return 2;
  }
  try {
    VImage in = VImage::new_from_file(argv[1], VImage::option()->set("access", VIPS_ACCESS_SEQUENTIAL));
    VImage out = in.resize(std::atof(argv[3]), VImage::option()->set("vscale", std::atof(argv[4]))->set("kernel", VIPS_KERNEL_LANCZOS3));
    out.write_to_file(argv[2]);
  } catch (const vips::VError &e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
