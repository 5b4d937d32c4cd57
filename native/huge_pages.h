// Buffers for the large images and planes a job writes once (a full-size copy of the image, its
// matte, the refinement's planes), in mappings of their own advised for transparent huge pages.
//
// Why: where the kernel gives huge pages only to memory that asks for them (transparent_hugepage
// "madvise": Ubuntu's default and many VMs'), a fresh large buffer faults in 4 KiB at a time, a
// noticeable share of a background removal's CPU (bench/README.md, "Page faults"). A mapping of its own (not
// malloc's) keeps the advice from outliving the buffer: it is unmapped when freed, so no heap range
// stays advised for huge pages where the kernel could later fill a 2 MiB page for a few bytes.
// Where huge pages are "always" or "never" the advice changes nothing.
#pragma once

#include <vips/vips8>

#include <cstddef>
#include <new>
#include <vector>

namespace matte {

/** Buffers of at least this many bytes get a mapping of their own; smaller ones come from operator new. */
constexpr size_t kHugeBufferBytes = size_t(4) << 20;

/** kHugeBufferBytes and more: a mapping of its own, advised, zero-filled; less: operator new. */
void *allocate_large(size_t bytes);
/** Frees what allocate_large gave for `bytes`. */
void free_large(void *data, size_t bytes) noexcept;

/** The allocator of LargeVector: allocate_large / free_large. */
template <class T>
struct LargeAllocator {
  using value_type = T;
  LargeAllocator() = default;
  template <class U>
  LargeAllocator(const LargeAllocator<U> &) noexcept {}
  T *allocate(size_t n) {
    if (n > size_t(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T *>(allocate_large(n * sizeof(T)));
  }
  void deallocate(T *data, size_t n) noexcept { free_large(data, n * sizeof(T)); }
  template <class U>
  bool operator==(const LargeAllocator<U> &) const noexcept { return true; }
  template <class U>
  bool operator!=(const LargeAllocator<U> &) const noexcept { return false; }
};

/**
 * A vector for the planes a job allocates afresh each time (the guided filter's coefficients at
 * IS-Net's 1024x1024).
 */
template <class T>
using LargeVector = std::vector<T, LargeAllocator<T>>;

/**
 * glibc's malloc serves requests of at least this size (its largest mmap threshold on 64-bit
 * systems, which M_MMAP_THRESHOLD cannot raise) from a mapping of their own, unmapped on free.
 */
constexpr size_t kMallocAlwaysMapsBytes = size_t(32) << 20;

/**
 * Advises a malloc'ed buffer of `bytes` for huge pages, before it is written, when malloc gave it a
 * mapping of its own (at least kMallocAlwaysMapsBytes): the advice then goes with the buffer. For
 * buffers that must stay malloc'ed (the encoded file, freed by its JS Buffer with g_free).
 */
void advise_huge_pages(void *data, size_t bytes);

/**
 * An uninitialised memory image of w x h x bands `format` pixels over such a buffer, freed when
 * libvips closes the image. Write its pixels through VIPS_IMAGE_ADDR before anyone reads it.
 */
vips::VImage new_memory_image(int width, int height, int bands, VipsBandFormat format);

/** `in` computed into such a buffer: what VImage::copy_memory() does, for large images. */
vips::VImage copy_to_memory(const vips::VImage &in);

}  // namespace matte
