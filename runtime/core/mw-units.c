/* mw-units.c — the site tables and static objects: a UNIT record per
 * translation unit (its sites, with a deduplicated string table) once its
 * global base is known, a STATIC record per registered object, and the
 * images (executable, shared objects) whose mw_units / mw_statics sections
 * list them.  Layout: runtime/TRACE-FORMAT.md; the sections: memwrap.h.
 */
#define _GNU_SOURCE 1
#include <string.h>

#include "../mw-internal.h"

#if MW_TARGET
/* ---- a target's UNIT: no scratch memory, streamed past the buffer ----
 * Each string is looked up among the last MW_RECENT strings the table took
 * (round robin), so a unit's file name and each function's name are written
 * once; a string met again after that is written again, which the format
 * allows.  The lookups are made three times in the same order (to size the
 * record, to write the strings, to write the sites' indices) and so give the
 * same indices each time. */
#define MW_RECENT 16
struct mw_recent {
  const char *s[MW_RECENT];
  uint32_t len[MW_RECENT], index[MW_RECENT];
  unsigned next;
  uint32_t count;               /* strings in the table so far */
};

/* s's index in the unit's table; *added: it is new (then its bytes follow in the table). */
static uint32_t mw_recent_index(struct mw_recent *r, const char *s, uint32_t len, int *added)
{
  for (unsigned k = 0; k < MW_RECENT && k < r->count; k++)
    if (r->len[k] == len && (r->s[k] == s || memcmp(r->s[k], s, len) == 0)) {
      *added = 0;
      return r->index[k];
    }
  unsigned k = r->next;
  r->next = (r->next + 1) % MW_RECENT;
  r->s[k] = s;
  r->len[k] = len;
  r->index[k] = r->count;
  *added = 1;
  return r->count++;
}

static const char *mw_site_string(const struct __mw_site *s, int k)
{
  const char *str = k == 0 ? s->file : k == 1 ? s->func : s->name;
  return str ? str : "";
}

/* UNIT: the unit's sites, with their strings looked up as above. */
static void mw_write_unit(struct mw_thread *t, const struct __mw_unit *u)
{
  struct mw_recent r;
  size_t n = u->nsites, strings = 0, sites = 0;
  int added;
  memset(&r, 0, sizeof r);
  for (size_t i = 0; i < n; i++)
    for (int k = 0; k < 3; k++) {
      const char *str = mw_site_string(&u->sites[i], k);
      uint32_t len = (uint32_t)strlen(str), x = mw_recent_index(&r, str, len, &added);
      if (added) strings += mw_len_u(len) + len;
      sites += mw_len_u(x);
    }
  for (size_t i = 0; i < n; i++) sites += mw_len_u(u->sites[i].kind) + mw_len_u(u->sites[i].line);
  uint32_t nstr = r.count;
  if (!mw_stream_begin(t, 1 + mw_len_u(u->base) + mw_len_u(n) + mw_len_u(nstr) + strings + sites)) return;
  unsigned char *p = t->cur;
  *p++ = MW_REC_UNIT;
  p = mw_put_u32(p, u->base);
  p = mw_put_u(mw_stream_room(t, p, 10), n);
  p = mw_put_u32(mw_stream_room(t, p, 5), nstr);
  memset(&r, 0, sizeof r);
  for (size_t i = 0; i < n; i++)
    for (int k = 0; k < 3; k++) {
      const char *str = mw_site_string(&u->sites[i], k);
      uint32_t len = (uint32_t)strlen(str);
      mw_recent_index(&r, str, len, &added);
      if (!added) continue;
      p = mw_put_u32(mw_stream_room(t, p, 5), len);
      p = mw_stream_bytes(t, p, str, len);
    }
  memset(&r, 0, sizeof r);
  for (size_t i = 0; i < n; i++) {
    const struct __mw_site *s = &u->sites[i];
    p = mw_put_u32(mw_stream_room(t, p, 5), s->kind);
    for (int k = 0; k < 3; k++) {
      const char *str = mw_site_string(s, k);
      p = mw_put_u32(mw_stream_room(t, p, 5), mw_recent_index(&r, str, (uint32_t)strlen(str), &added));
    }
    p = mw_put_u32(mw_stream_room(t, p, 5), s->line);
  }
  mw_stream_end(t, p);
}
#else
#include <sys/mman.h>

static uint32_t mw_str_hash(const char *s, size_t n)
{
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

/* UNIT: the unit's sites, with a deduplicated string table. */
static void mw_write_unit(struct mw_thread *t, const struct __mw_unit *u)
{
  size_t n = u->nsites, ns = 3 * n, tsize = 16;
  while (tsize < 2 * ns) tsize <<= 1;
  size_t bytes = ns * (sizeof(uint32_t) + sizeof(const char *) + sizeof(size_t)) + tsize * sizeof(uint32_t);
  void *m = NULL;
  if (n) {
    m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
      t->lost++;
      return;
    }
  }
  const char **sp = m;
  size_t *sl = (size_t *)(void *)(sp + ns);
  uint32_t *idx = (uint32_t *)(void *)(sl + ns), *table = idx + ns;
  size_t nstr = 0, size = 40 + n * 50;
  for (size_t i = 0; i < n; i++) {
    const struct __mw_site *s = &u->sites[i];
    const char *f[3] = {s->file, s->func, s->name};
    for (int k = 0; k < 3; k++) {
      const char *str = f[k] ? f[k] : "";
      size_t len = strlen(str);
      uint32_t h = mw_str_hash(str, len) & (uint32_t)(tsize - 1);
      for (;;) {
        uint32_t e = table[h];
        if (!e) {
          sp[nstr] = str;
          sl[nstr] = len;
          table[h] = (uint32_t)++nstr;
          idx[3 * i + (size_t)k] = (uint32_t)(nstr - 1);
          size += len + 10;
          break;
        }
        if (sl[e - 1] == len && (sp[e - 1] == str || memcmp(sp[e - 1], str, len) == 0)) {
          idx[3 * i + (size_t)k] = e - 1;
          break;
        }
        h = (h + 1) & (uint32_t)(tsize - 1);
      }
    }
  }
  if (mw_room(t, size)) {
    unsigned char *p = t->cur;
    *p++ = MW_REC_UNIT;
    p = mw_put_u32(p, u->base);
    p = mw_put_u(p, n);
    p = mw_put_u(p, nstr);
    for (size_t j = 0; j < nstr; j++) p = mw_put_str(p, sp[j], sl[j]);
    for (size_t i = 0; i < n; i++) {
      p = mw_put_u32(p, u->sites[i].kind);
      p = mw_put_u32(p, idx[3 * i]);
      p = mw_put_u32(p, idx[3 * i + 1]);
      p = mw_put_u32(p, idx[3 * i + 2]);
      p = mw_put_u32(p, u->sites[i].line);
    }
    mw_commit_named(t, p);
  }
  if (m) munmap(m, bytes);
}
#endif /* MW_TARGET */

/* Is u in one of the images' mw_units sections? */
static int mw_unit_in_images(const struct __mw_unit *u)
{
  for (unsigned i = 0; i < mw_g.nimages; i++)
    for (struct __mw_unit *const *a = mw_g.images[i].ub; a < mw_g.images[i].ue; a++)
      if (*a == u) return 1;
  return 0;
}

#if MW_TARGET
static void mw_reach_note(const struct __mw_unit *u, unsigned base)
{
  (void)u;
  (void)base;
}
#else
uint32_t *mw_reach_table;

/* The table with room for site ids below `need`; NULL when no memory.  A
 * grown table is a new mapping and the old one stays mapped: a thread may be
 * reading it (units_lock held). */
static uint32_t *mw_reach_room(unsigned need)
{
  uint32_t *r = mw_reach_table;
  if (r && need <= r[0]) return r;
  size_t n = r ? (size_t)r[0] * 2 : 4096;
  while (n < need) n *= 2;
  uint32_t *m = mmap(NULL, n * sizeof *m, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return NULL;
  if (r) memcpy(m, r, (size_t)r[0] * sizeof *m);
  m[0] = (uint32_t)n;
  __atomic_store_n(&mw_reach_table, m, __ATOMIC_RELEASE);
  return m;
}

/* A CALLS_BOUND site's bytes (decimal digits; anything else, as an unknown bound, 0). */
static uint32_t mw_bound_bytes(const char *name)
{
  uint64_t v = 0;
  if (!name || !*name) return 0;
  for (const char *c = name; *c; c++) {
    if (*c < '0' || *c > '9' || v > 0xffffffffu / 10) return 0;
    v = v * 10 + (uint64_t)(*c - '0');
  }
  return v > 0xffffffffu ? 0 : (uint32_t)v;
}

/* The first ENTRY site of function `func` at or after site `from`; n when none. */
static size_t mw_entry_site(const struct __mw_unit *u, const char *func, size_t from)
{
  size_t n = u->nsites;
  for (size_t k = from; k < n; k++) {
    const char *f = u->sites[k].func;
    if (u->sites[k].kind == MW_SITE_ENTRY && (f == func || (f && func && strcmp(f, func) == 0))) return k;
  }
  return n;
}

/* Each CALLS_BOUND site's bytes, under the ENTRY site of the same function
 * (units_lock held, before the unit's base is published).  Both kinds come
 * in the unit's order of functions, so one pass pairs them; a function not
 * found on the way is looked for from the start.  Without memory for the
 * table a bound is not kept: its function's calls are then written as if it
 * called nothing summarised, and the reader's peak stack misses at most that
 * bound for calls no deeper than one written. */
static void mw_reach_note(const struct __mw_unit *u, unsigned base)
{
  size_t entry = 0, n = u->nsites;
  uint32_t *r = NULL;
  for (size_t i = 0; i < n; i++) {
    const struct __mw_site *b = &u->sites[i];
    if (b->kind != MW_SITE_CALLS_BOUND) continue;
    uint32_t bytes = mw_bound_bytes(b->name);
    if (!bytes) continue;
    size_t k = mw_entry_site(u, b->func, entry);
    if (k == n) k = mw_entry_site(u, b->func, 0);
    if (k == n) continue;
    entry = k + 1;
    if (!r && !(r = mw_reach_room(base + (unsigned)n))) return;
    r[base + k] = bytes;
  }
}
#endif

/* Gives u its global base if it has none, writes its UNIT record, and
 * returns the base.  For a unit no image listed yet (its object's
 * constructor has not run); remembered so a fork child can repeat it. */
unsigned mw_unit_register(struct mw_thread *t, struct __mw_unit *u)
{
  unsigned base = __atomic_load_n(&u->base, __ATOMIC_ACQUIRE);
  if (base) return base;
  mw_lock(&mw_g.units_lock);
  base = u->base;
  if (!base) {
    if (!mw_g.next_base) mw_g.next_base = 1;
    base = mw_g.next_base;
    mw_g.next_base += u->nsites;
    mw_reach_note(u, base);
    __atomic_store_n(&u->base, base, __ATOMIC_RELEASE);
    if (mw_g.nextra < sizeof mw_g.extra / sizeof mw_g.extra[0]) mw_g.extra[mw_g.nextra++] = u;
    mw_write_unit(t, u);
  }
  mw_unlock(&mw_g.units_lock);
  return base;
}

static void mw_write_static(struct mw_thread *t, const struct __mw_static_ref *s)
{
  unsigned base = mw_unit_register(t, s->unit);
  if (!mw_room(t, 40)) return;
  unsigned char *p = t->cur;
  *p++ = MW_REC_STATIC;
  p = mw_put_u32(p, base + s->site);
  p = mw_put_u(p, (uintptr_t)s->addr);
  p = mw_put_u(p, s->size);
  mw_commit(t, p);
}

/* UNIT records for an image's units (all of them, or only those still
 * without a base), then its STATIC records. */
static void mw_write_image(struct mw_thread *t, const struct mw_image *im, int all)
{
  mw_lock(&mw_g.units_lock);
  if (!mw_g.next_base) mw_g.next_base = 1;
  for (struct __mw_unit *const *a = im->ub; a < im->ue; a++) {
    struct __mw_unit *u = *a;
    if (!u) continue;
    if (!u->base) {
      mw_reach_note(u, mw_g.next_base);
      __atomic_store_n(&u->base, mw_g.next_base, __ATOMIC_RELEASE);
      mw_g.next_base += u->nsites;
    } else if (!all) {
      continue;
    }
    mw_write_unit(t, u);
  }
  mw_unlock(&mw_g.units_lock);
  for (const struct __mw_static_ref *s = im->sb; s < im->se; s++)
    if (s->unit) mw_write_static(t, s);
}

/* Notes an executable's or shared object's mw_units/mw_statics bounds;
 * returns the new image, or NULL if known already (or no room). */
static struct mw_image *mw_image_note(struct __mw_unit *const *ub, struct __mw_unit *const *ue,
                                      const struct __mw_static_ref *sb, const struct __mw_static_ref *se)
{
  struct mw_image *im = NULL;
  if (!ub || ub >= ue) ub = ue = NULL;
  if (!sb || sb >= se) sb = se = NULL;
  if (!ub && !sb) return NULL;
  mw_lock(&mw_g.units_lock);
  unsigned i = 0;
  while (i < mw_g.nimages && !(mw_g.images[i].ub == ub && mw_g.images[i].sb == sb)) i++;
  if (i == mw_g.nimages && i < sizeof mw_g.images / sizeof mw_g.images[0]) {
    im = &mw_g.images[mw_g.nimages++];
    im->ub = ub;
    im->ue = ue;
    im->sb = sb;
    im->se = se;
  }
  mw_unlock(&mw_g.units_lock);
  return im;
}

/* Each runtime copy's constructor passes its own object's sections (the
 * bounds are hidden symbols, so a copy inside a shared object sees that
 * object's), and all copies share one runtime. */
void mw_image_add(struct __mw_unit *const *ub, struct __mw_unit *const *ue, const struct __mw_static_ref *sb,
                  const struct __mw_static_ref *se)
{
  struct mw_image *im = mw_image_note(ub, ue, sb, se);
  struct mw_thread *t = &mw_t;
  if (!im || mw_state() != MW_ACTIVE || t->busy) return; /* start-up will write it */
  if (!t->end && !mw_thread_ready(t)) return;
  t->busy = MW_BUSY_RECORDING;
  mw_fence();
  mw_write_image(t, im, 0); /* an object whose constructor ran after start-up */
  mw_fence();
  t->busy = 0;
}

/* At start-up (and in a fork child's new trace): every image known so far,
 * this copy's own included, and the units registered outside them. */
void mw_write_units_and_statics(struct mw_thread *t)
{
  mw_image_note(__start_mw_units, __stop_mw_units, __start_mw_statics, __stop_mw_statics);
  for (unsigned i = 0; i < mw_g.nimages; i++) mw_write_image(t, &mw_g.images[i], 1);
  mw_lock(&mw_g.units_lock);
  for (unsigned i = 0; i < mw_g.nextra; i++)
    if (!mw_unit_in_images(mw_g.extra[i])) mw_write_unit(t, mw_g.extra[i]);
  mw_unlock(&mw_g.units_lock);
}
