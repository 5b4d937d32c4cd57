#include "libvips_got.h"

#include <vips/vips.h>

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace matte {

namespace {

#if defined(__x86_64__)
#define MATTE_GOT_REWRITE 1
constexpr uint32_t kJumpSlot = R_X86_64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
#define MATTE_GOT_REWRITE 1
constexpr uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_AARCH64_GLOB_DAT;
#endif

// The libvips the addon runs with, opened again for a reference (callers close it).
void *open_libvips() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void *>(&vips_init), &info) || !info.dli_fname) return nullptr;
  return dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
}

#ifdef MATTE_GOT_REWRITE

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

#endif

}  // namespace

void *libvips_binding(const char *name) {
  void *vips = open_libvips();
  if (!vips) return nullptr;
  void *found = dlsym(vips, name);
  dlclose(vips);  // only the reference dlopen added: libvips stays loaded
  return found;
}

int redirect_libvips_calls(const char *name, void *replacement) {
#ifdef MATTE_GOT_REWRITE
  void *vips = open_libvips();
  if (!vips) return 0;
  link_map *map = nullptr;
  const bool found = dlinfo(vips, RTLD_DI_LINKMAP, &map) == 0 && map;
  dlclose(vips);
  if (!found) return 0;
  return patch(map, name, replacement, relro_of(map->l_addr));
#else
  (void)name;
  (void)replacement;
  return 0;
#endif
}

}  // namespace matte
