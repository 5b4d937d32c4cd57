// The reference for test/engine/gif-webp-encoders.test.ts and the bench's encoder comparison: what
// matte's GIF and animated WebP output was before it called libimagequant, cgif and WebPAnimEncoder
// itself, i.e. the system libvips' gifsave and webpsave with the settings native/save.cc passed
// (strip; Q for WebP), on every frame of the input. Built with the system compiler:
//
//   libvips-save IN OUT.gif|OUT.webp [Q] [--repeat N]
//
// --repeat N saves N times and prints the mean seconds per save (the input decoded once, in memory).
#include <vips/vips8>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using vips::VImage;

int main(int argc, char **argv) {
  if (VIPS_INIT(argv[0]) || argc < 3) {
    std::fprintf(stderr, "usage: libvips-save IN OUT.gif|OUT.webp [Q] [--repeat N]\n");
    return 2;
  }
  int quality = 80, repeat = 0;
  for (int i = 3; i < argc; i++) {
    if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = std::atoi(argv[++i]);
    else quality = std::atoi(argv[i]);
  }
  try {
    std::string in = argv[1], out = argv[2];
    const char *loader = vips_foreign_find_load(in.c_str());
    bool animatable = loader && (std::strstr(loader, "gif") || std::strstr(loader, "webp"));
    VImage image = VImage::new_from_file(in.c_str(), animatable ? VImage::option()->set("n", -1) : nullptr).copy_memory();
    bool webp = out.size() > 5 && out.compare(out.size() - 5, 5, ".webp") == 0;
    auto save = [&] {
      void *data = nullptr;
      size_t size = 0;
      vips::VOption *options = VImage::option()->set("strip", true);
      if (webp) options->set("Q", quality);
      image.write_to_buffer(webp ? ".webp" : ".gif", &data, &size, options);
      return std::make_pair(data, size);
    };
    if (repeat > 0) {
      auto started = std::chrono::steady_clock::now();
      for (int i = 0; i < repeat; i++) g_free(save().first);
      std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
      std::printf("%.4f\n", took.count() / repeat);
    }
    auto [data, size] = save();
    FILE *f = std::fopen(out.c_str(), "wb");
    if (!f || std::fwrite(data, 1, size, f) != size || std::fclose(f)) {
      std::fprintf(stderr, "cannot write %s\n", out.c_str());
      return 1;
    }
    g_free(data);
  } catch (const vips::VError &err) {
    std::fprintf(stderr, "%s\n", err.what());
    return 1;
  }
  return 0;
}
