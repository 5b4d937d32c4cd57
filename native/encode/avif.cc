// AVIF through libheif directly. libvips 8.14's heifsave sets only quality, lossless, speed and
// chroma on the encoder; two more aom parameters matter, and it has no way to pass them:
//
// - "aom:enable-intrabc" = 0. libaom 3.6 (Debian 12) takes images with large flat areas for screen
//   content and then hashes every block position of the frame for its IntraBC tool, on one thread,
//   which costs most of the encode while the tool is almost never chosen; only exactly repeated
//   aliased glyphs lose a little size without it (docs/architecture.md, "AVIF output").
// - "threads" = the job's share of the cores (libvips' worker count, which lib/job.ts keeps at
//   cores / jobs running), at least 2. libheif's default is 4 whatever the machine. Any count of
//   2 or more gives the same bytes (libheif turns on row-based multi-threading from 2, and that
//   changes the bitstream), so the output does not depend on the load; 1 would differ.
//
// Everything else is what heifsave does: an 8-bit interleaved RGB(A) heif_image filled row by row
// from a libvips sink (so the job's budget stops the pixel phase), libheif's RGB to YCbCr
// conversion and default nclx, alpha saved as an auxiliary image when there are 4 bands.
#include "avif.h"

#include "../errors.h"
#include "libheif.h"  // libheif's functions, loaded on the first AVIF (not linked)

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

using vips::VImage;

namespace matte {

namespace {

// heifsave's defaults in libvips 8.14: effort 4, chroma "420" (subsample "auto" chooses 4:4:4 only
// from Q 90). The quality is the job's, on libheif's scale as heifsave's Q (bounds.h kAvifQuality
// by default).
const int kAvifSpeed = 9 - 4;
const char *kChroma = "420";
// libheif's aom plugin accepts 1..16 threads.
const int kMinThreads = 2, kMaxThreads = 16;

template <typename T, auto LibHeif::*Free>
struct Releaser {
  void operator()(T *p) const {
    if (p) (libheif().*Free)(p);
  }
};
using Context = std::unique_ptr<heif_context, Releaser<heif_context, &LibHeif::context_free>>;
using HeifEncoder = std::unique_ptr<heif_encoder, Releaser<heif_encoder, &LibHeif::encoder_release>>;
using Image = std::unique_ptr<heif_image, Releaser<heif_image, &LibHeif::image_release>>;
using Handle = std::unique_ptr<heif_image_handle, Releaser<heif_image_handle, &LibHeif::image_handle_release>>;
using Options = std::unique_ptr<heif_encoding_options, Releaser<heif_encoding_options, &LibHeif::encoding_options_free>>;

void check(const heif_error &error, const char *what) {
  if (error.code == heif_error_Ok) return;
  throw Error("internal", std::string("AVIF encoding failed (") + what + "): " + (error.message ? error.message : ""));
}

// As heifsave: a parameter this encoder does not know is not an error (another AV1 plugin than
// aom may be the one libheif picked on another system).
void check_parameter(const heif_error &error, const char *name) {
  if (error.code != heif_error_Ok && error.subcode != heif_suberror_Unsupported_parameter) check(error, name);
}

struct Rows {
  uint8_t *plane;
  int stride;
  size_t row_bytes;
};

// Called by vips_sink_disc with the rows of each strip, in order, on one thread at a time.
int copy_rows(VipsRegion *region, VipsRect *area, void *user) {
  auto *rows = static_cast<Rows *>(user);
  for (int y = area->top; y < VIPS_RECT_BOTTOM(area); y++)
    std::memcpy(rows->plane + size_t(y) * rows->stride, VIPS_REGION_ADDR(region, area->left, y), rows->row_bytes);
  return 0;
}

VImage rgb8(VImage image) {
  // The pipeline already delivers 8-bit sRGB with 3 or 4 bands; this only guards the contract.
  if (image.bands() < 3) image = image.colourspace(VIPS_INTERPRETATION_sRGB);
  if (image.format() != VIPS_FORMAT_UCHAR) image = image.cast(VIPS_FORMAT_UCHAR);
  return image;
}

struct HeifOutput {
  void *data = nullptr;
  size_t size = 0;
};

heif_error write_output(heif_context *, const void *data, size_t size, void *user) {
  auto *out = static_cast<HeifOutput *>(user);
  // heif_context_write hands over the whole file in one call.
  out->data = g_malloc(size);
  std::memcpy(out->data, data, size);
  out->size = size;
  return heif_error{heif_error_Ok, heif_suberror_Unspecified, "ok"};
}

}  // namespace

void encode_avif(const VImage &input, int quality, void **data, size_t *size) {
  VImage image = rgb8(input);
  const int width = image.width(), height = image.height();
  const bool alpha = image.bands() > 3;

  const LibHeif &heif = libheif();
  Context context(heif.context_alloc());
  if (!context) throw Error("internal", "AVIF encoding failed: no libheif context");
  heif_encoder *raw_encoder = nullptr;
  check(heif.context_get_encoder_for_format(context.get(), heif_compression_AV1, &raw_encoder), "AV1 encoder");
  HeifEncoder encoder(raw_encoder);
  check(heif.encoder_set_lossy_quality(encoder.get(), quality), "quality");
  check(heif.encoder_set_lossless(encoder.get(), 0), "lossless");
  check_parameter(heif.encoder_set_parameter_integer(encoder.get(), "speed", kAvifSpeed), "speed");
  check_parameter(heif.encoder_set_parameter_string(encoder.get(), "chroma", kChroma), "chroma");
  const int threads = std::clamp(vips_concurrency_get(), kMinThreads, kMaxThreads);
  check_parameter(heif.encoder_set_parameter_integer(encoder.get(), "threads", threads), "threads");
  check_parameter(heif.encoder_set_parameter_string(encoder.get(), "aom:enable-intrabc", "0"), "enable-intrabc");

  heif_image *raw_image = nullptr;
  check(heif.image_create(width, height, heif_colorspace_RGB,
                          alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, &raw_image),
        "image");
  Image picture(raw_image);
  check(heif.image_add_plane(picture.get(), heif_channel_interleaved, width, height, 8), "plane");
  Rows rows{nullptr, 0, size_t(width) * image.bands()};
  rows.plane = heif.image_get_plane(picture.get(), heif_channel_interleaved, &rows.stride);
  if (!rows.plane) throw Error("internal", "AVIF encoding failed: no image plane");

  // The pixels, computed as heifsave computes them: a failure here (a corrupt input, the budget's
  // kill flag) is a VError for the pipeline to classify.
  if (vips_sink_disc(image.get_image(), copy_rows, &rows)) throw vips::VError();

  Options options(heif.encoding_options_alloc());
  options->save_alpha_channel = alpha;
  heif_image_handle *raw_handle = nullptr;
  check(heif.context_encode_image(context.get(), picture.get(), encoder.get(), options.get(), &raw_handle), "encode");
  Handle handle(raw_handle);
  picture.reset();

  HeifOutput out;
  heif_writer writer{};
  writer.writer_api_version = 1;
  writer.write = write_output;
  heif_error written = heif.context_write(context.get(), &writer, &out);
  if (written.code != heif_error_Ok) {
    g_free(out.data);
    check(written, "write");
  }
  *data = out.data;
  *size = out.size;
}

}  // namespace matte
