// The reference for test/engine/avif.test.ts: what matte's AVIF output was before it called
// libheif itself, i.e. the system libvips' heifsave with the settings native/save.cc passed
// (strip, AV1, everything else libvips' default). Built by the test with the system compiler:
//
//   libvips-avif IN.png OUT.avif
#include <vips/vips8>

#include <cstdio>

int main(int argc, char **argv) {
  if (VIPS_INIT(argv[0]) || argc != 3) {
    std::fprintf(stderr, "usage: libvips-avif IN.png OUT.avif\n");
    return 2;
  }
  try {
    vips::VImage image = vips::VImage::new_from_file(argv[1]);
    image.write_to_file(argv[2], vips::VImage::option()->set("strip", true)->set(
                                     "compression", VIPS_FOREIGN_HEIF_COMPRESSION_AV1));
  } catch (const vips::VError &err) {
    std::fprintf(stderr, "%s\n", err.what());
    return 1;
  }
  return 0;
}
