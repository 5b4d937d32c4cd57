#include "codec_floor.h"

#include "../encode/webp.h"

#include <jpeglib.h>
#include <time.h>

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace matte {

namespace {

double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct JpegError {
  jpeg_error_mgr manager;
  jmp_buf jump;
};

void on_jpeg_error(j_common_ptr info) {
  auto *error = reinterpret_cast<JpegError *>(info->err);
  longjmp(error->jump, 1);
}

struct Decoded {
  std::vector<uint8_t> rgb;
  int width = 0, height = 0;
};

void decode_jpeg(const uint8_t *data, size_t size, int shrink, Decoded &out) {
  jpeg_decompress_struct info{};
  JpegError error{};
  info.err = jpeg_std_error(&error.manager);
  error.manager.error_exit = on_jpeg_error;
  if (setjmp(error.jump)) {
    jpeg_destroy_decompress(&info);
    throw std::runtime_error("the JPEG cannot be decoded");
  }
  jpeg_create_decompress(&info);
  jpeg_mem_src(&info, data, (unsigned long)size);
  jpeg_read_header(&info, TRUE);
  info.scale_num = 1;
  info.scale_denom = shrink;
  info.dct_method = JDCT_ISLOW;
  info.out_color_space = JCS_RGB;
  jpeg_start_decompress(&info);
  out.width = int(info.output_width);
  out.height = int(info.output_height);
  size_t stride = size_t(out.width) * 3;
  out.rgb.resize(stride * out.height);
  while (info.output_scanline < info.output_height) {
    JSAMPROW row = out.rgb.data() + stride * info.output_scanline;
    jpeg_read_scanlines(&info, &row, 1);
  }
  jpeg_finish_decompress(&info);
  jpeg_destroy_decompress(&info);
}

// As libvips' jpegsave writes for native/save.cc: 4:2:0, the quality's tables, optimised Huffman codes.
size_t encode_jpeg(const std::vector<uint8_t> &rgb, int width, int height, int quality) {
  jpeg_compress_struct info{};
  JpegError error{};
  info.err = jpeg_std_error(&error.manager);
  error.manager.error_exit = on_jpeg_error;
  unsigned char *mem = nullptr;
  unsigned long mem_size = 0;
  if (setjmp(error.jump)) {
    jpeg_destroy_compress(&info);
    free(mem);
    throw std::runtime_error("the JPEG cannot be encoded");
  }
  jpeg_create_compress(&info);
  jpeg_mem_dest(&info, &mem, &mem_size);
  info.image_width = width;
  info.image_height = height;
  info.input_components = 3;
  info.in_color_space = JCS_RGB;
  jpeg_set_defaults(&info);
  jpeg_set_quality(&info, quality, TRUE);
  info.optimize_coding = TRUE;
  jpeg_start_compress(&info, TRUE);
  size_t stride = size_t(width) * 3;
  while (info.next_scanline < info.image_height) {
    JSAMPROW row = const_cast<uint8_t *>(rgb.data()) + stride * info.next_scanline;
    jpeg_write_scanlines(&info, &row, 1);
  }
  jpeg_finish_compress(&info);
  jpeg_destroy_compress(&info);
  size_t written = mem_size;
  free(mem);
  return written;
}

size_t encode_webp(const std::vector<uint8_t> &rgb, int width, int height, int quality) {
  WebPConfig config = webp_config(quality);
  WebPPicture picture;
  WebPPictureInit(&picture);
  WebPMemoryWriter writer;
  WebPMemoryWriterInit(&writer);
  picture.width = width;
  picture.height = height;
  picture.use_argb = 0;
  picture.writer = WebPMemoryWrite;
  picture.custom_ptr = &writer;
  bool ok = WebPPictureImportRGB(&picture, rgb.data(), width * 3) && WebPEncode(&config, &picture);
  size_t written = writer.size;
  WebPPictureFree(&picture);
  WebPMemoryWriterClear(&writer);
  if (!ok) throw std::runtime_error("the WebP cannot be encoded");
  return written;
}

// The final image's pixels: nearest samples of the decoded image (their cost is not the floor's).
std::vector<uint8_t> sample(const Decoded &in, int width, int height) {
  std::vector<uint8_t> out(size_t(width) * height * 3);
  for (int y = 0; y < height; y++) {
    const uint8_t *row = in.rgb.data() + size_t(int64_t(y) * in.height / height) * in.width * 3;
    for (int x = 0; x < width; x++) {
      const uint8_t *p = row + size_t(int64_t(x) * in.width / width) * 3;
      std::copy(p, p + 3, out.data() + (size_t(y) * width + x) * 3);
    }
  }
  return out;
}

int int_option(const Napi::Object &options, const char *key, int fallback) {
  Napi::Value v = options.Get(key);
  return v.IsNumber() ? v.As<Napi::Number>().Int32Value() : fallback;
}

}  // namespace

Napi::Value codec_floor_probe(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsBuffer() || !info[1].IsObject()) {
    Napi::TypeError::New(env, "codecFloor(jpeg, {shrink, width, height, format, quality, runs})").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  Napi::Buffer<uint8_t> jpeg = info[0].As<Napi::Buffer<uint8_t>>();
  Napi::Object options = info[1].As<Napi::Object>();
  int shrink = int_option(options, "shrink", 1), width = int_option(options, "width", 0);
  int height = int_option(options, "height", 0), quality = int_option(options, "quality", 80);
  int runs = std::max(1, int_option(options, "runs", 5));
  std::string format = options.Get("format").ToString().Utf8Value();
  if ((shrink != 1 && shrink != 2 && shrink != 4 && shrink != 8) || width < 1 || height < 1 ||
      (format != "jpeg" && format != "webp")) {
    Napi::RangeError::New(env, "codecFloor: shrink 1, 2, 4 or 8; width and height >= 1; format jpeg or webp").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  try {
    std::vector<double> decode_ms, encode_ms;
    Decoded decoded;
    size_t bytes = 0;
    std::vector<uint8_t> final_image;
    for (int run = 0; run <= runs; run++) {  // run 0 warms the caches up, untimed
      double start = thread_cpu_ms();
      decode_jpeg(jpeg.Data(), jpeg.Length(), shrink, decoded);
      double decoded_at = thread_cpu_ms();
      if (final_image.empty()) final_image = sample(decoded, width, height);
      double encode_start = thread_cpu_ms();
      bytes = format == "jpeg" ? encode_jpeg(final_image, width, height, quality) : encode_webp(final_image, width, height, quality);
      double end = thread_cpu_ms();
      if (run == 0) continue;
      decode_ms.push_back(decoded_at - start);
      encode_ms.push_back(end - encode_start);
    }
    Napi::Object result = Napi::Object::New(env);
    result.Set("decodeMs", median(decode_ms));
    result.Set("encodeMs", median(encode_ms));
    result.Set("decodedWidth", decoded.width);
    result.Set("decodedHeight", decoded.height);
    result.Set("bytes", double(bytes));
    return result;
  } catch (const std::exception &e) {
    Napi::Error::New(env, std::string("codecFloor: ") + e.what()).ThrowAsJavaScriptException();
    return env.Undefined();
  }
}

}  // namespace matte
