// PNG encoding with the deflate spread over the job's cores, as pigz does for gzip.
//
// Why: a 12 MP PNG spends most of its time in deflate, which libpng runs on one thread. Here the
// filtered scanlines are cut into stripes of about kStripeBytes, each deflated on its own by one of
// N threads, and the stripes' streams are joined into the one zlib stream PNG needs: every stripe
// but the last ends byte-aligned in a non-final block (what zlib's Z_SYNC_FLUSH writes), so they
// concatenate; the first carries the zlib header, the last the Adler-32 of all the data
// (adler32_combine over the stripes, in order). Each stripe's bytes are one IDAT chunk, its CRC
// computed by the thread that deflated it.
//
// The deflater is libdeflate, which costs less CPU than zlib and writes smaller files (docs/architecture.md,
// "PNG encoding"); it is whole-buffer only, so a stripe is a complete stream made non-final
// afterwards (see Deflater). zlib remains for its inflate (finding that stream's last block) and
// adler32_combine.
//
// The file is what libvips 8.14's pngsave writes with strip and compression 6 (native/save.cc's
// settings): filter type None on every row (libvips' default), level 6, IHDR, pHYs from the
// image's resolution, the IDATs, IEND (test/engine/png.test.ts compares them).
//
// Pixels come through vips_sink_disc, the sink libvips' own savers use: it computes the image
// region by region on libvips' workers and hands us strips of rows in order on one thread, so
// the job's budget (native/budget.cc: the "eval" signal, the kill flag) stops it exactly as it
// stopped libvips' pngsave. Peak memory is the stripes in flight (2 per thread) and the output.
#include "png.h"

#include "../errors.h"
#include "../huge_pages.h"

#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using vips::VImage;

namespace matte {

namespace {

// Half a MiB of filtered bytes a stripe: a 4000x3000 RGB image is ~70 stripes, enough to keep every
// core busy to the end. Each seam costs a new Huffman table and (with libdeflate, which takes no
// dictionary) the matches that would reach back across it: little at this stripe size, much more
// with stripes of a few KiB.
const size_t kStripeBytes = 512 * 1024;
// libdeflate's level standing for pngsave's compression 6 (native/save.cc): the fastest of its own
// scale whose files stay at most 5% larger than pngsave's (docs/architecture.md, "PNG encoding").
const int kLibdeflateLevel = 4;
const uint8_t kZlibHeader[2] = {0x78, 0x9c};  // deflate, 32 KiB window, default level (RFC 1950)
const uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

void put32(uint8_t *p, uint32_t v) {
  p[0] = uint8_t(v >> 24);
  p[1] = uint8_t(v >> 16);
  p[2] = uint8_t(v >> 8);
  p[3] = uint8_t(v);
}

// The encoded file, in a g_malloc'ed buffer (the addon hands it to JS and frees it with g_free).
// g_realloc of a large block remaps its pages rather than copying them.
class PngOutput {
 public:
  PngOutput() = default;
  PngOutput(const PngOutput &) = delete;
  PngOutput &operator=(const PngOutput &) = delete;
  ~PngOutput() { g_free(data_); }

  // Room for the whole file at once, only the pages written become resident: a buffer grown step
  // by step is copied at each step, and glibc keeps the freed steps in its heap.
  void reserve(size_t n) {
    if (n <= capacity_) return;
    data_ = static_cast<uint8_t *>(g_realloc(data_, n));
    capacity_ = n;
    advise_huge_pages(data_, n);  // huge_pages.h: a large buffer written once
  }

  uint8_t *grow(size_t n) {
    if (size_ + n > capacity_) {
      capacity_ = std::max(size_ + n, capacity_ + capacity_ / 2);
      data_ = static_cast<uint8_t *>(g_realloc(data_, capacity_));
    }
    uint8_t *at = data_ + size_;
    size_ += n;
    return at;
  }

  void append(const uint8_t *bytes, size_t n) { std::memcpy(grow(n), bytes, n); }

  // A whole chunk: length, type, body, CRC of type and body.
  void chunk(const char *type, const uint8_t *body, size_t n) {
    uint8_t *at = grow(12 + n);
    put32(at, uint32_t(n));
    std::memcpy(at + 4, type, 4);
    if (n) std::memcpy(at + 8, body, n);
    put32(at + 8 + n, uint32_t(crc32(0, at + 4, uInt(4 + n))));
  }

  void release(void **data, size_t *size) {
    *data = g_realloc(data_, size_);
    *size = size_;
    data_ = nullptr;
  }

 private:
  uint8_t *data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// Rows of filtered scanlines, then (once deflated) the IDAT chunk that holds them.
struct Stripe {
  std::vector<uint8_t> rows;     // filter byte + pixels, per row
  std::vector<uint8_t> chunk;    // length (set when written), "IDAT", zlib bytes
  bool first = false;
  bool last = false;
  size_t length = 0;             // bytes of rows
  uint32_t adler = 1;            // Adler-32 of rows
  uint32_t crc = 0;              // CRC-32 of "IDAT" and the zlib bytes so far
  bool done = false;
};

// How a stripe is deflated, by libdeflate; one object per thread, reused for every stripe it
// deflates. libdeflate is whole-buffer only: each stripe is a complete deflate stream (no
// dictionary), whose last block is final. As zlib's examples/gzjoin.c does, the stream is inflated with Z_BLOCK to find where its last block's header
// is (libdeflate says nothing of its blocks); that block's BFINAL bit is cleared and an empty stored
// block appended, which ends the stripe byte-aligned exactly as a sync flush does.
class Deflater {
 public:
  Deflater() : compressor_(libdeflate_alloc_compressor(kLibdeflateLevel)) {
    std::memset(&z_, 0, sizeof z_);
    if (!compressor_ || inflateInit2(&z_, -15) != Z_OK) {
      if (compressor_) libdeflate_free_compressor(compressor_);
      throw Error("internal", "could not start libdeflate");
    }
  }
  ~Deflater() {
    libdeflate_free_compressor(compressor_);
    inflateEnd(&z_);
  }

  void run(Stripe &s) {
    const size_t head = 8 + (s.first ? sizeof kZlibHeader : 0);
    size_t produced = head + deflate_rows(s, head);
    s.length = s.rows.size();
    // libdeflate's checksums: the same values as zlib's, faster than the zlib the addon's calls land
    // in (Node's).
    s.adler = libdeflate_adler32(1, s.rows.data(), s.rows.size());
    s.chunk.resize(produced);
    if (s.first) std::memcpy(s.chunk.data() + 8, kZlibHeader, sizeof kZlibHeader);
    std::memcpy(s.chunk.data() + 4, "IDAT", 4);
    s.crc = libdeflate_crc32(0, s.chunk.data() + 4, produced - 4);
  }

 private:
  // Deflates s.rows into s.chunk from `at` on, leaving 8 bytes spare at the end (the last stripe's
  // Adler-32, the CRC); returns the bytes written. Every stripe but the last ends byte-aligned and
  // not final; the last one final.
  size_t deflate_rows(Stripe &s, size_t at) {
    size_t bound = libdeflate_deflate_compress_bound(compressor_, s.rows.size());
    s.chunk.resize(at + bound + 5 + 8);  // 5: the empty stored block
    uint8_t *stream = s.chunk.data() + at;
    size_t n = libdeflate_deflate_compress(compressor_, s.rows.data(), s.rows.size(), stream, bound);
    if (n == 0) throw Error("internal", "libdeflate's deflate failed");
    return s.last ? n : unfinal(stream, n);
  }

  // Makes a complete raw deflate stream of n bytes non-final and byte-aligned; returns its length.
  size_t unfinal(uint8_t *stream, size_t n) {
    if (inflateReset(&z_) != Z_OK) throw Error("internal", "zlib's inflate failed");
    z_.next_in = stream;
    z_.avail_in = uInt(n);
    size_t last_header = 0;  // bit position of the last block header seen (the first is at bit 0)
    size_t end = 0;          // bit position just past the final block
    for (;;) {
      z_.next_out = junk_;
      z_.avail_out = sizeof junk_;
      int result = inflate(&z_, Z_BLOCK);
      if (result != Z_OK) throw Error("internal", "libdeflate's stream did not inflate");
      // Bits read so far: bytes taken minus the bits inflate holds unused (data_type's low 6 bits).
      size_t bit = size_t(z_.next_in - stream) * 8 - size_t(z_.data_type & 63);
      if (z_.data_type & 128) {  // at a block boundary (Z_BLOCK stops there)
        if (z_.data_type & 64) {  // ... after the final block: the stream ends here
          end = bit;
          break;
        }
        last_header = bit;  // ... before another block: its header starts here
      }
    }
    stream[last_header >> 3] &= uint8_t(~(1u << (last_header & 7)));  // BFINAL = 0
    // An empty stored block from `end` on: 3 header bits 000, zero padding to the byte, LEN 0, NLEN ~0.
    if (end & 7) stream[end >> 3] &= uint8_t((1u << (end & 7)) - 1);
    size_t stored = (end + 3 + 7) / 8;
    for (size_t i = (end + 7) / 8; i < stored; ++i) stream[i] = 0;
    static const uint8_t kEmptyStored[4] = {0x00, 0x00, 0xff, 0xff};
    std::memcpy(stream + stored, kEmptyStored, 4);
    return stored + 4;
  }

  libdeflate_compressor *compressor_;
  z_stream z_;
  uint8_t junk_[1 << 16];
};

class PngEncoder {
 public:
  PngEncoder(const VImage &image, const PngOptions &options)
      : image_(image.get_image()), width_(image.width()), height_(image.height()), bands_(image.bands()) {
    row_bytes_ = 1 + size_t(width_) * size_t(bands_);
    size_t stripe_bytes = options.stripe_bytes ? options.stripe_bytes : kStripeBytes;
    rows_per_stripe_ = int(std::max<size_t>(1, std::min<size_t>(size_t(height_), stripe_bytes / row_bytes_)));
    int stripes = (height_ + rows_per_stripe_ - 1) / rows_per_stripe_;
    int threads = options.threads > 0 ? options.threads : vips_concurrency_get();
    threads_ = std::max(1, std::min({threads, stripes, 64}));
    max_in_flight_ = size_t(threads_) * 2;
  }

  ~PngEncoder() { stop_workers(); }

  void encode(void **data, size_t *size) {
    write_header();
    if (threads_ > 1) {
      for (int i = 0; i < threads_; ++i) workers_.emplace_back([this] { deflate_loop(); });
    } else {
      inline_ = std::make_unique<Deflater>();
    }
    int computed = vips_sink_disc(image_, write_rows, this);
    if (computed == 0) {
      std::unique_lock<std::mutex> lock(mutex_);
      room_.wait(lock, [this] { return in_order_.empty() || aborted_.load(); });
    } else {
      abort();
    }
    stop_workers();
    // The encoder's own failure (zlib, memory) first: the sink then failed because of it.
    if (!failure_.empty()) throw Error("internal", "the PNG encoder failed: " + failure_);
    // The pixels failed (a decoder), or the budget stopped the job (a libvips kill, seen by the sink
    // or by a deflate thread): pipeline.cc tells which.
    if (computed != 0) throw vips::VError();
    if (aborted_.load()) throw vips::VError("the PNG encoder was stopped");
    out_.chunk("IEND", nullptr, 0);
    out_.release(data, size);
  }

 private:
  void write_header() {
    // Deflate never grows data by more than 5 bytes per 16 KiB stored block; each stripe adds a
    // chunk header, a CRC and a sync-flush marker.
    size_t rows = row_bytes_ * size_t(height_);
    size_t stripes = (size_t(height_) + rows_per_stripe_ - 1) / rows_per_stripe_;
    out_.reserve(64 + rows + rows / 1024 + stripes * 32);
    out_.append(kSignature, sizeof kSignature);
    static const uint8_t kColourType[] = {0, 0, 4, 2, 6};  // by bands: grey, grey+alpha, RGB, RGBA
    uint8_t ihdr[13];
    put32(ihdr, uint32_t(width_));
    put32(ihdr + 4, uint32_t(height_));
    ihdr[8] = 8;  // bits per sample
    ihdr[9] = kColourType[bands_];
    ihdr[10] = ihdr[11] = ihdr[12] = 0;  // deflate, adaptive filtering method, not interlaced
    out_.chunk("IHDR", ihdr, sizeof ihdr);
    // libvips writes the resolution (pixels per mm) as pixels per metre, always.
    uint8_t phys[9];
    put32(phys, uint32_t(VIPS_RINT(image_->Xres * 1000)));
    put32(phys + 4, uint32_t(VIPS_RINT(image_->Yres * 1000)));
    phys[8] = 1;  // metre
    out_.chunk("pHYs", phys, sizeof phys);
  }

  // libvips' sink: called on one thread, with consecutive strips of whole rows, top to bottom.
  static int write_rows(VipsRegion *region, VipsRect *area, void *self) {
    return static_cast<PngEncoder *>(self)->take(region, *area) ? 0 : -1;
  }

  bool take(VipsRegion *region, const VipsRect &area) {
    try {
      for (int y = area.top; y < area.top + area.height; ++y) {
        if (aborted_.load() || killed()) return false;
        if (!current_) begin_stripe(y);
        uint8_t *row = current_->rows.data() + size_t(current_rows_) * row_bytes_;
        row[0] = 0;  // filter type None, as libvips writes
        std::memcpy(row + 1, VIPS_REGION_ADDR(region, 0, y), row_bytes_ - 1);
        if (++current_rows_ * row_bytes_ == current_->rows.size()) submit(y == height_ - 1);
      }
      return true;
    } catch (const std::exception &e) {
      fail(e.what());
      return false;
    }
  }

  void begin_stripe(int top) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!spare_.empty()) {
        current_ = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    if (!current_) current_ = std::make_shared<Stripe>();
    *current_ = Stripe{std::move(current_->rows), std::move(current_->chunk)};
    current_->first = top == 0;
    current_->rows.resize(size_t(std::min(rows_per_stripe_, height_ - top)) * row_bytes_);
    current_rows_ = 0;
  }

  void submit(bool last) {
    std::shared_ptr<Stripe> s = std::move(current_);
    s->last = last;
    if (!inline_) {
      std::unique_lock<std::mutex> lock(mutex_);
      room_.wait(lock, [this] { return in_order_.size() < max_in_flight_ || aborted_.load(); });
      if (aborted_.load()) return;
      in_order_.push_back(s);
      queue_.push_back(s);
      work_.notify_one();
      return;
    }
    inline_->run(*s);
    std::lock_guard<std::mutex> lock(mutex_);
    s->done = true;
    in_order_.push_back(s);
    drain_locked();
  }

  void deflate_loop() {
    std::unique_ptr<Deflater> deflater;
    for (;;) {
      std::shared_ptr<Stripe> s;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        work_.wait(lock, [this] { return closing_ || !queue_.empty(); });
        if (queue_.empty()) return;
        s = queue_.front();
        queue_.pop_front();
      }
      // A stopped job skips what is left: the sink fails at its next strip and the job unwinds.
      if (!aborted_.load() && !killed()) {
        try {
          if (!deflater) deflater = std::make_unique<Deflater>();
          deflater->run(*s);
        } catch (const std::exception &e) {
          fail(e.what());
        }
      } else {
        aborted_.store(true);
      }
      std::lock_guard<std::mutex> lock(mutex_);
      s->done = true;
      drain_locked();
      room_.notify_all();
    }
  }

  // Writes the stripes that are done, in image order. Called with mutex_ held.
  void drain_locked() {
    while (!in_order_.empty() && in_order_.front()->done) {
      std::shared_ptr<Stripe> s = std::move(in_order_.front());
      in_order_.pop_front();
      if (aborted_.load()) continue;
      adler_ = uint32_t(adler32_combine(adler_, s->adler, z_off_t(s->length)));
      if (s->last) {
        uint8_t trailer[4];
        put32(trailer, adler_);
        s->chunk.insert(s->chunk.end(), trailer, trailer + 4);
        s->crc = libdeflate_crc32(s->crc, trailer, 4);
      }
      put32(s->chunk.data(), uint32_t(s->chunk.size() - 8));
      out_.append(s->chunk.data(), s->chunk.size());
      uint8_t crc[4];
      put32(crc, s->crc);
      out_.append(crc, 4);
      spare_.push_back(std::move(s));
    }
  }

  // The budget (native/budget.cc) sets the kill flag of the image being computed and of the
  // image it watches; read without clearing (vips_image_iskilled clears it).
  bool killed() const {
    if (__atomic_load_n(&image_->kill, __ATOMIC_RELAXED)) return true;
    VipsImage *watched = image_->progress_signal;
    return watched && __atomic_load_n(&watched->kill, __ATOMIC_RELAXED);
  }

  void fail(const std::string &message) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failure_.empty()) failure_ = message;
    aborted_.store(true);
    room_.notify_all();
  }

  void abort() {
    std::lock_guard<std::mutex> lock(mutex_);
    aborted_.store(true);
    room_.notify_all();
  }

  void stop_workers() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closing_ = true;
      work_.notify_all();
    }
    for (std::thread &worker : workers_) worker.join();
    workers_.clear();
  }

  VipsImage *image_;
  int width_, height_, bands_;
  size_t row_bytes_ = 0;
  int rows_per_stripe_ = 1;
  int threads_ = 1;
  size_t max_in_flight_ = 2;

  // The stripe being filled, on the sink's thread.
  std::shared_ptr<Stripe> current_;
  int current_rows_ = 0;
  std::unique_ptr<Deflater> inline_;  // one thread: the sink's thread deflates

  std::mutex mutex_;
  std::condition_variable work_;  // a stripe to deflate, or closing
  std::condition_variable room_;  // a stripe written, or aborted
  std::deque<std::shared_ptr<Stripe>> queue_;     // waiting for a deflater
  std::deque<std::shared_ptr<Stripe>> in_order_;  // submitted and not yet written, top to bottom
  // Written stripes, kept with their buffers for the next ones: a new buffer per stripe makes glibc
  // raise its mmap threshold and keep the freed blocks in the threads' arenas; reused, the encoder
  // allocates at most (in flight + 1) stripes.
  std::vector<std::shared_ptr<Stripe>> spare_;
  bool closing_ = false;
  std::atomic<bool> aborted_{false};
  std::string failure_;
  std::vector<std::thread> workers_;
  uint32_t adler_ = 1;
  PngOutput out_;
};

}  // namespace

bool png_encodable(const VImage &image) {
  VipsImage *im = image.get_image();
  if (!im || im->BandFmt != VIPS_FORMAT_UCHAR || im->Coding != VIPS_CODING_NONE) return false;
  if (vips_image_get_page_height(im) != im->Ysize) return false;
  switch (im->Bands) {
    case 1:
    case 2: return im->Type == VIPS_INTERPRETATION_B_W;
    case 3:
    case 4: return im->Type == VIPS_INTERPRETATION_sRGB;
    default: return false;
  }
}

void encode_png(const VImage &image, void **data, size_t *size, const PngOptions &options) {
  PngEncoder(image, options).encode(data, size);
}

}  // namespace matte
