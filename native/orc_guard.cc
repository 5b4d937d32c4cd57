// Why: libvips 8.14 compiles ORC programs for some operations (convi: the integer convolution of
// blur; reducev: resize; morph) when they are built, and frees them when the operation is
// disposed, on whichever thread drops its last reference. It compiles under its global lock but
// frees with no lock at all (libvips/iofuncs/vector.c, vips_vector_free), and the liborc of Debian 12
// (0.4.33) frees a program's code with no lock either: orc_code_chunk_free merges the freed chunk
// with its neighbours in liborc's one process-wide list of code chunks. Two jobs disposing such
// operations at once, or one disposing while another compiles, corrupt that list: a SIGSEGV or a
// double free in liborc, i.e. the end of the server. Reduced to liborc alone (compile under a lock,
// free without, 4 threads x 50000): 7 runs of 10 crashed; with the free under the same lock, 0 of 10.
// Later liborc releases lock inside orc_code_chunk_free; libvips 8.15 dropped ORC.
//
// The fix here: libvips' calls of orc_program_compile and orc_program_free go through one mutex of
// ours, by rewriting the two entries of libvips' global offset table (what plthook does), so ORC
// keeps its speed (turning ORC off, VIPS_NOVECTOR, costs 1.4-3.5x the CPU of a blur or a resize).
// The mutex is innermost (liborc calls nothing back), so it cannot deadlock with libvips' own lock.
#include "orc_guard.h"

#include <vips/vips.h>

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <mutex>

namespace matte {

namespace {

#if defined(__x86_64__)
#define MATTE_ORC_GUARD 1
constexpr uint32_t kJumpSlot = R_X86_64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
#define MATTE_ORC_GUARD 1
constexpr uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_AARCH64_GLOB_DAT;
#endif

std::mutex orc_mutex;
using Compile = int (*)(void *);
using Free = void (*)(void *);
Compile real_compile = nullptr;
Free real_free = nullptr;
bool guarded = false;

int locked_compile(void *program) {
  std::lock_guard<std::mutex> lock(orc_mutex);
  return real_compile(program);
}

void locked_free(void *program) {
  std::lock_guard<std::mutex> lock(orc_mutex);
  real_free(program);
}

#ifdef MATTE_ORC_GUARD

// The pages the dynamic loader made read-only after relocating the object (PT_GNU_RELRO, rounded
// down at both ends as glibc's _dl_protect_relro does); libvips is linked with full RELRO.
struct ReadOnly {
  uintptr_t start = 0, end = 0;
};

ReadOnly relro_of(uintptr_t base) {
  struct Search {
    uintptr_t base;
    ReadOnly pages;
  } search{base, {}};
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) {
        auto *s = static_cast<Search *>(data);
        if (info->dlpi_addr != s->base) return 0;
        const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
        for (int i = 0; i < info->dlpi_phnum; i++) {
          const ElfW(Phdr) &ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_GNU_RELRO) continue;
          s->pages.start = (info->dlpi_addr + ph.p_vaddr) & ~(page - 1);
          s->pages.end = (info->dlpi_addr + ph.p_vaddr + ph.p_memsz) & ~(page - 1);
        }
        return 1;
      },
      &search);
  return search.pages;
}

bool write_slot(void **slot, void *value, const ReadOnly &relro) {
  const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  const uintptr_t at = reinterpret_cast<uintptr_t>(slot);
  void *start = reinterpret_cast<void *>(at & ~(page - 1));
  const bool read_only = at >= relro.start && at < relro.end;
  if (read_only && mprotect(start, page, PROT_READ | PROT_WRITE) != 0) return false;
  __atomic_store_n(slot, value, __ATOMIC_SEQ_CST);
  if (read_only) mprotect(start, page, PROT_READ);
  return true;
}

// glibc relocates the pointers of the dynamic section in place; an unrelocated one is an offset.
template <typename T>
const T *dynamic_pointer(const link_map *map, ElfW(Addr) value) {
  return reinterpret_cast<const T *>(value < map->l_addr ? value + map->l_addr : value);
}

// Points every GOT entry of the object for `name` (calls through the PLT, or the function's
// address taken) at `replacement`; returns how many there were.
int patch(const link_map *map, const char *name, void *replacement, const ReadOnly &relro) {
  const ElfW(Sym) *symbols = nullptr;
  const char *strings = nullptr;
  const ElfW(Rela) *tables[2] = {nullptr, nullptr};
  size_t sizes[2] = {0, 0};
  for (const ElfW(Dyn) *d = map->l_ld; d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB: symbols = dynamic_pointer<ElfW(Sym)>(map, d->d_un.d_ptr); break;
      case DT_STRTAB: strings = dynamic_pointer<char>(map, d->d_un.d_ptr); break;
      case DT_JMPREL: tables[0] = dynamic_pointer<ElfW(Rela)>(map, d->d_un.d_ptr); break;
      case DT_PLTRELSZ: sizes[0] = d->d_un.d_val; break;
      case DT_RELA: tables[1] = dynamic_pointer<ElfW(Rela)>(map, d->d_un.d_ptr); break;
      case DT_RELASZ: sizes[1] = d->d_un.d_val; break;
      case DT_PLTREL:
        if (d->d_un.d_val != DT_RELA) return 0;  // REL-style tables: not on x86_64 or aarch64
        break;
      default: break;
    }
  }
  if (!symbols || !strings) return 0;
  int patched = 0;
  for (int t = 0; t < 2; t++) {
    if (!tables[t]) continue;
    for (size_t i = 0; i < sizes[t] / sizeof(ElfW(Rela)); i++) {
      const ElfW(Rela) &r = tables[t][i];
      const uint32_t type = uint32_t(ELF64_R_TYPE(r.r_info));
      if (type != kJumpSlot && type != kGlobDat) continue;
      const ElfW(Sym) &symbol = symbols[ELF64_R_SYM(r.r_info)];
      if (std::strcmp(strings + symbol.st_name, name) != 0) continue;
      if (write_slot(reinterpret_cast<void **>(map->l_addr + r.r_offset), replacement, relro)) patched++;
    }
  }
  return patched;
}

bool install() {
  // The libvips the addon runs with (not another one in the process, e.g. sharp's).
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void *>(&vips_init), &info) || !info.dli_fname) return false;
  void *vips = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  if (!vips) return false;
  link_map *map = nullptr;
  const bool found = dlinfo(vips, RTLD_DI_LINKMAP, &map) == 0 && map;
  // Looked up from libvips' handle: what its own calls bind to (its liborc).
  real_compile = reinterpret_cast<Compile>(dlsym(vips, "orc_program_compile"));
  real_free = reinterpret_cast<Free>(dlsym(vips, "orc_program_free"));
  dlclose(vips);  // only the reference dlopen added: libvips stays loaded
  if (!found || !real_compile || !real_free) return false;  // a libvips without ORC
  const ReadOnly relro = relro_of(map->l_addr);
  // Both or neither: a guarded free would still race with an unguarded compile.
  if (patch(map, "orc_program_compile", reinterpret_cast<void *>(&locked_compile), relro) == 0) return false;
  return patch(map, "orc_program_free", reinterpret_cast<void *>(&locked_free), relro) > 0;
}

#else

bool install() { return false; }

#endif

}  // namespace

bool guard_libvips_orc() {
  static const bool result = [] {
    guarded = install();
    return guarded;
  }();
  return result;
}

bool libvips_orc_guarded() { return guarded; }

}  // namespace matte
