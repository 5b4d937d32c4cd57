#include "huge_pages.h"

#include <glib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <new>

namespace matte {

namespace {

struct Mapping {
  void *data;
  size_t bytes;
};

void unmap(VipsImage *, gpointer user) {
  auto *mapping = static_cast<Mapping *>(user);
  free_large(mapping->data, mapping->bytes);
  delete mapping;
}

// An image over a new buffer of its size, the buffer freed with the image.
VipsImage *image_over_new_buffer(int width, int height, int bands, VipsBandFormat format) {
  const size_t bytes = size_t(width) * size_t(height) * size_t(bands) * vips_format_sizeof(format);
  auto *mapping = new Mapping{allocate_large(bytes), bytes};
  VipsImage *image = vips_image_new_from_memory(mapping->data, bytes, width, height, bands, format);
  if (!image) {
    unmap(nullptr, mapping);
    throw vips::VError();
  }
  g_signal_connect(image, "postclose", G_CALLBACK(unmap), mapping);
  return image;
}

// The kernel backs with huge pages only the 2 MiB-aligned 2 MiB extents of an advised mapping:
// a mapping is laid out on that boundary and rounded up to whole extents, or all but one or two
// extents of a buffer of a few MiB would still fault in 4 KiB at a time.
constexpr size_t kHugePageBytes = size_t(2) << 20;

size_t mapped_length(size_t bytes) { return (bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1); }

}  // namespace

void *allocate_large(size_t bytes) {
  if (bytes < kHugeBufferBytes) return ::operator new(bytes);
  const size_t length = mapped_length(bytes);
  void *raw = mmap(nullptr, length + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t start = (uintptr_t(raw) + kHugePageBytes - 1) & ~uintptr_t(kHugePageBytes - 1);
  const size_t head = start - uintptr_t(raw);
  if (head) munmap(raw, head);
  munmap(reinterpret_cast<void *>(start + length), kHugePageBytes - head);  // never empty: head < 2 MiB
  void *data = reinterpret_cast<void *>(start);
#ifdef MADV_HUGEPAGE
  // Advice only: refused (EINVAL where the kernel has no transparent huge pages), the buffer is
  // the same, in small pages.
  madvise(data, length, MADV_HUGEPAGE);
#endif
  return data;
}

void free_large(void *data, size_t bytes) noexcept {
  if (!data) return;
  if (bytes < kHugeBufferBytes) ::operator delete(data);
  else munmap(data, mapped_length(bytes));
}

void advise_huge_pages(void *data, size_t bytes) {
#if defined(__GLIBC__) && defined(MADV_HUGEPAGE)
  if (bytes < kMallocAlwaysMapsBytes) return;
  // madvise wants a page-aligned start: the chunk's first page holds malloc's header too, which is
  // part of the same mapping.
  const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  const uintptr_t start = uintptr_t(data) & ~(page - 1);
  madvise(reinterpret_cast<void *>(start), uintptr_t(data) + bytes - start, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

vips::VImage new_memory_image(int width, int height, int bands, VipsBandFormat format) {
  return vips::VImage(image_over_new_buffer(width, height, bands, format));
}

vips::VImage copy_to_memory(const vips::VImage &in) {
  const VipsImageType type = in.get_image()->dtype;
  // Small images, and images that can be read already (in memory, mapped), as libvips does it.
  if (VIPS_IMAGE_SIZEOF_IMAGE(in.get_image()) < kHugeBufferBytes || (type != VIPS_IMAGE_PARTIAL && type != VIPS_IMAGE_OPENIN))
    return in.copy_memory();
  VipsImage *out = image_over_new_buffer(in.width(), in.height(), in.bands(), in.format());
  // vips_image_write copies the header (interpretation, resolution, metadata) and computes the
  // pixels into the image's buffer, as vips_image_copy_memory does into one of its own.
  if (vips_image_write(in.get_image(), out)) {
    g_object_unref(out);
    throw vips::VError();
  }
  return vips::VImage(out);
}

}  // namespace matte
