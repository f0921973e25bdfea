/* mw-libs.c — which loaded object called the interposed allocator.
 *
 * The interposed malloc & co. pass __builtin_return_address(0); this file
 * finds the executable or shared object whose PT_LOAD segments hold it and
 * writes EXT/CALLER (its index) after the heap record, and EXT/LIBRARY (index,
 * path) the first time an object is named (TRACE-FORMAT.md).
 *
 * The table (mw_libs, a fixed global: no malloc) maps [lowest PT_LOAD start,
 * highest PT_LOAD end) of every loaded object to a stable index.  It is built
 * with dl_iterate_phdr and rebuilt when an address is in no object and
 * dl_iterate_phdr's dlpi_adds/dlpi_subs have changed since the last build.
 * Each thread caches its last hit (range + index + table generation), so the
 * common case takes no lock.
 *
 * When the caller is not the executable (whose code is the instrumented code),
 * EXT/CALL_PATH follows CALLER: the return addresses of the frames from the
 * allocator's caller out to the first one in the executable, from the
 * unwinder (libgcc's _Unwind_Backtrace, which reads the objects' unwind
 * tables), each as (library index, offset from the object's load base).  The
 * reader names them offline from the objects' symbol tables: the library
 * function the instrumented code called (MPI_Init …) and the innermost named
 * one.  Only interposed calls made inside libraries pay for it.
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#include "mw-internal.h"
#if MW_INTERPOSE
#include <unwind.h>
#endif

struct mw_libs mw_libs;

/* Stores a name in the pool; returns its offset (names that do not fit get
 * length 0). */
static void mw_lib_name(struct mw_lib *l, const char *s, size_t n)
{
  if (n > MW_LIB_NAMES - mw_libs.names_used) n = 0;
  l->name_off = mw_libs.names_used;
  l->name_len = (unsigned)n;
  memcpy(mw_libs.names + mw_libs.names_used, s, n);
  mw_libs.names_used += (unsigned)n;
}

struct mw_scan {
  int first;
  int unchanged;                /* adds/subs as at the last build: stop early */
  unsigned nranges;
};

static int mw_libs_phdr(struct dl_phdr_info *info, size_t size, void *arg)
{
  struct mw_scan *sc = arg;
  if (sc->first) {
    sc->first = 0;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
      if (mw_libs.gen && info->dlpi_adds == mw_libs.adds && info->dlpi_subs == mw_libs.subs) {
        sc->unchanged = 1;
        return 1;
      }
      mw_libs.adds = info->dlpi_adds;
      mw_libs.subs = info->dlpi_subs;
    }
  }
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (unsigned i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    uintptr_t from = (uintptr_t)info->dlpi_addr + (uintptr_t)ph->p_vaddr;
    if (from < lo) lo = from;
    if (from + (uintptr_t)ph->p_memsz > hi) hi = from + (uintptr_t)ph->p_memsz;
  }
  if (lo >= hi || sc->nranges >= MW_LIBS_MAX) return 0;
  const char *name = info->dlpi_name ? info->dlpi_name : "";
  size_t nlen = strlen(name);
  /* the same object as before keeps its index */
  unsigned idx = MW_LIBS_MAX;
  for (unsigned k = 0; k < mw_libs.nlibs; k++) {
    struct mw_lib *l = &mw_libs.libs[k];
    if (l->base == (uintptr_t)info->dlpi_addr && (!nlen || (l->name_len == nlen && !memcmp(mw_libs.names + l->name_off, name, nlen)))) {
      idx = k;
      break;
    }
  }
  if (idx == MW_LIBS_MAX) {
    if (mw_libs.nlibs >= MW_LIBS_MAX) return 0;
    idx = mw_libs.nlibs;
    struct mw_lib *l = &mw_libs.libs[idx];
    l->base = (uintptr_t)info->dlpi_addr;
    l->written = 0;
    l->exe = !nlen && sc->nranges == 0; /* the first object, unnamed */
    if (nlen) {
      mw_lib_name(l, name, nlen);
    } else {
      /* the executable (dlpi_name ""): its resolved path */
      char exe[4096];
      ssize_t n = readlink("/proc/self/exe", exe, sizeof exe);
      mw_lib_name(l, exe, n > 0 ? (size_t)n : 0);
    }
    __atomic_store_n(&mw_libs.nlibs, idx + 1, __ATOMIC_RELEASE);
  }
  struct mw_lib_range *r = &mw_libs.ranges[sc->nranges++];
  r->lo = lo;
  r->hi = hi;
  r->index = idx;
  return 0;
}

static int mw_libs_find(uintptr_t ra, struct mw_lib_range *out)
{
  for (unsigned k = 0; k < mw_libs.nranges; k++) {
    const struct mw_lib_range *r = &mw_libs.ranges[k];
    if (ra >= r->lo && ra < r->hi) {
      *out = *r;
      return 1;
    }
  }
  return 0;
}

/* The object holding ra, with the table's lock held: looked up, and if it is in no object known, the loaded objects
   scanned again (one may have been loaded since) and looked up once more; 0 if none. */
static int mw_libs_find_or_rescan(uintptr_t ra, struct mw_lib_range *out)
{
  struct mw_scan sc = {1, 0, 0};
  if (mw_libs.gen && mw_libs_find(ra, out)) return 1;
  dl_iterate_phdr(mw_libs_phdr, &sc);
  if (sc.unchanged) return 0;
  mw_libs.nranges = sc.nranges;
  if (++mw_libs.gen == 0) mw_libs.gen = 1;
  return mw_libs_find(ra, out);
}

/* The object holding ra, under the table's lock; 0 if none. */
static int mw_libs_lookup(uintptr_t ra, struct mw_lib_range *out, unsigned *gen)
{
  int found;
  mw_lock(&mw_libs.lock);
  found = mw_libs_find_or_rescan(ra, out);
  *gen = mw_libs.gen;
  mw_unlock(&mw_libs.lock);
  return found;
}

/* EXT/LIBRARY: `u` index, `str` path. */
static void mw_write_library(struct mw_thread *t, unsigned idx)
{
  const struct mw_lib *l = &mw_libs.libs[idx];
  size_t n = l->name_len;
  size_t plen = mw_len_u(idx) + mw_len_u(n) + n;
  if (!mw_room(t, plen + 24)) return;
  unsigned char *p = t->cur;
  *p++ = MW_REC_EXT;
  p = mw_put_u(p, MW_EXT_LIBRARY);
  p = mw_put_u(p, plen);
  p = mw_put_u(p, idx);
  p = mw_put_str(p, mw_libs.names + l->name_off, n);
  mw_commit_named(t, p);
}

static void mw_write_call_path(struct mw_thread *t, uintptr_t ra);

/* EXT/LIBRARY for object idx, the first time any thread names it. */
static void mw_name_library(struct mw_thread *t, unsigned idx)
{
  if (!__atomic_load_n(&mw_libs.libs[idx].written, __ATOMIC_ACQUIRE) &&
      !__atomic_exchange_n(&mw_libs.libs[idx].written, 1, __ATOMIC_ACQ_REL))
    mw_write_library(t, idx);
}

/* The index of the object holding ra (named by EXT/LIBRARY on first use); 0 if none. */
static int mw_caller_index(struct mw_thread *t, uintptr_t ra, unsigned *out)
{
  unsigned gen = __atomic_load_n(&mw_libs.gen, __ATOMIC_RELAXED);
  if (MW_LIKELY(t->lib_gen && t->lib_gen == gen && ra >= t->lib_lo && ra < t->lib_hi)) {
    *out = t->lib_index;
    return 1;
  }
  struct mw_lib_range r;
  if (!ra || !mw_libs_lookup(ra, &r, &gen)) return 0;
  t->lib_lo = r.lo;
  t->lib_hi = r.hi;
  t->lib_index = *out = r.index;
  t->lib_gen = gen;
  mw_name_library(t, r.index);
  return 1;
}

uint64_t mw_caller_library(struct mw_thread *t, uintptr_t ra)
{
  unsigned idx;
  return mw_caller_index(t, ra, &idx) ? idx : MW_ONLINE_LIB_UNKNOWN;
}

void mw_write_caller(struct mw_thread *t, uintptr_t ra)
{
  unsigned idx;
  if (!mw_caller_index(t, ra, &idx)) return; /* unknown: no CALLER */
  if (!mw_room(t, 8)) return;
  unsigned char *p = t->cur;
  *p++ = MW_REC_EXT;
  p = mw_put_u(p, MW_EXT_CALLER);
  p = mw_put_u(p, mw_len_u(idx));
  p = mw_put_u(p, idx);
  mw_commit(t, p);
  if (mw_g.call_paths && !mw_libs.libs[idx].exe) mw_write_call_path(t, ra);
}

#if MW_INTERPOSE
struct mw_unwound {
  uintptr_t ra;                 /* the allocator's return address: frames before it are the runtime's */
  int started;
  unsigned n, skipped;
  uintptr_t ip[MW_CALL_PATH_MAX];
};

typedef _Unwind_Reason_Code (*mw_backtrace_fn)(_Unwind_Trace_Fn, void *);

#if defined(__arm__)
/* ARM EHABI's _Unwind_GetIP is a macro over _Unwind_VRS_Get: the unwinder is linked in directly there. */
#define MW_GET_IP(ctx) _Unwind_GetIP(ctx)
static mw_backtrace_fn mw_unwinder(void)
{
  return _Unwind_Backtrace;
}
#else
static _Unwind_Ptr (*mw_get_ip)(struct _Unwind_Context *);
#define MW_GET_IP(ctx) mw_get_ip(ctx)

/* libgcc's unwinder, looked up on first use (and libgcc_s loaded then if the program has not loaded it): a reference
 * linked in would load libgcc_s into every program at start, which changes what the program itself allocates (glibc
 * loads it, allocating, the first time a thread is cancelled or exits by pthread_exit). NULL if it cannot be had. */
static mw_backtrace_fn mw_unwinder(void)
{
  static mw_backtrace_fn fn;
  static int tried;
  if (__atomic_load_n(&tried, __ATOMIC_ACQUIRE)) return fn;
  void *lib = RTLD_DEFAULT;
  void *sym = dlsym(lib, "_Unwind_Backtrace");
  if (sym == NULL && (lib = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_GLOBAL)) != NULL) sym = dlsym(lib, "_Unwind_Backtrace");
  void *ip = sym == NULL ? NULL : dlsym(lib, "_Unwind_GetIP");
  if (ip == NULL) sym = NULL;
  /* POSIX's object-to-function pointer conversion, without ISO C's complaint */
  memcpy(&mw_get_ip, &ip, sizeof ip);
  memcpy(&fn, &sym, sizeof sym);
  __atomic_store_n(&tried, 1, __ATOMIC_RELEASE);
  return fn;
}
#endif

static _Unwind_Reason_Code mw_unwind_step(struct _Unwind_Context *ctx, void *arg)
{
  struct mw_unwound *u = arg;
  uintptr_t ip = (uintptr_t)MW_GET_IP(ctx);
  if (!u->started) {
    /* on ARM the unwinder clears the Thumb bit that the return address has */
    if ((ip | 1) != (u->ra | 1)) return ++u->skipped > 16 ? _URC_END_OF_STACK : _URC_NO_REASON;
    u->started = 1;
  }
  u->ip[u->n++] = ip;
  return u->n == MW_CALL_PATH_MAX ? _URC_END_OF_STACK : _URC_NO_REASON;
}

/* EXT/CALL_PATH: `u` flags (bit 0: the last address is in the executable,
 * bit 1: cut at MW_CALL_PATH_MAX), `u` count, count x (`u` library index,
 * `u` address - the object's load base). */
static void mw_write_call_path(struct mw_thread *t, uintptr_t ra)
{
  struct mw_unwound u;
  u.ra = ra;
  u.started = 0;
  u.n = u.skipped = 0;
  unsigned busy = t->busy;
  t->busy = MW_BUSY_INTERNAL; /* the unwinder's own allocations (if any) pass through */
  mw_backtrace_fn unwinder = mw_unwinder();
  if (unwinder == NULL) {
    t->busy = busy;
    return;
  }
  unwinder(mw_unwind_step, &u);
  t->busy = busy;
  if (!u.started || u.n == 0) return;
  unsigned idx[MW_CALL_PATH_MAX];
  uintptr_t off[MW_CALL_PATH_MAX];
  unsigned n = 0, flags = 0;
  mw_lock(&mw_libs.lock);
  for (unsigned i = 0; i < u.n; i++) {
    struct mw_lib_range r;
    int found = mw_libs_find_or_rescan(u.ip[i], &r);
    if (!found) break; /* generated code: the path ends here */
    idx[n] = r.index;
    off[n++] = u.ip[i] - mw_libs.libs[r.index].base;
    if (mw_libs.libs[r.index].exe) {
      flags |= 1;
      break;
    }
  }
  mw_unlock(&mw_libs.lock);
  if (!(flags & 1) && n == MW_CALL_PATH_MAX) flags |= 2;
  if (n == 0) return;
  size_t plen = mw_len_u(flags) + mw_len_u(n);
  for (unsigned i = 0; i < n; i++) {
    mw_name_library(t, idx[i]);
    plen += mw_len_u(idx[i]) + mw_len_u(off[i]);
  }
  if (!mw_room(t, plen + 24)) return;
  unsigned char *p = t->cur;
  *p++ = MW_REC_EXT;
  p = mw_put_u(p, MW_EXT_CALL_PATH);
  p = mw_put_u(p, plen);
  p = mw_put_u(p, flags);
  p = mw_put_u(p, n);
  for (unsigned i = 0; i < n; i++) {
    p = mw_put_u(p, idx[i]);
    p = mw_put_u(p, off[i]);
  }
  mw_commit(t, p);
}
#else
static void mw_write_call_path(struct mw_thread *t, uintptr_t ra)
{
  (void)t;
  (void)ra;
}
#endif
