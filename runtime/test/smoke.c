/* smoke.c — a hand-written C program in exactly the shape the rewriter
 * produces (site table, __mw_enter with a cleanup frame, __mw_* allocation
 * calls, exit sites set before return, __mw_resume around setjmp, static
 * objects in mw_statics), to exercise the runtime without the instrumenter.
 * Build with -DMW_PLAIN for the same program without the runtime.
 *
 *   smoke list      a->b->c; free(b) records LINKED {c}; strdup, calloc,
 *                   realloc, realloc(p,0), posix_memalign, aligned_alloc,
 *                   malloc(0), free(NULL) (not recorded), printf's buffer
 *                   (interposed)
 *   smoke recurse   depth 20 with char buf[256]: ENTER depths grow >= 256
 *   smoke threads   8 threads x 100000 malloc/free (plus one final pair)
 *   smoke longjmp   longjmp out of depth 10: UNWIND 10, then normal exits
 *   smoke fork      the child records its own trace, exits 3
 *   smoke exit      exit(7) from depth 5: UNWIND, END(0, 7)
 *   smoke abort     abort() from depth 5: END(1, 6), killed by SIGABRT
 *   smoke segv      null write from depth 5: END(1, 11), killed by SIGSEGV
 *   smoke spin      allocates forever (for SIGKILL tests)
 *   smoke signal    a SIGPROF handler enters instrumented code while the
 *                   main loop records: re-entry gives LOST records, never a
 *                   corrupt stream; every frame is closed at the end
 */
#ifdef MW_PLAIN
#include "mw-plain.h"
#else
#include "memwrap.h"
#endif
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

struct node {
  struct node *next;
  int value;
};

static int counter;

enum {
  S_MAKE_ENTRY, S_MAKE_FALL, S_MAKE_RET, S_MAKE_MALLOC,
  S_LIST_ENTRY, S_LIST_FALL, S_LIST_FREE_B, S_LIST_FREE_A, S_LIST_FREE_C, S_LIST_STRDUP, S_LIST_CALLOC,
  S_LIST_REALLOC, S_LIST_REALLOC0, S_LIST_PM, S_LIST_AL, S_LIST_FREE_S, S_LIST_FREE_CAL, S_LIST_FREE_PM,
  S_LIST_FREE_AL, S_LIST_MALLOC0, S_LIST_FREE_Z, S_LIST_FREE_NULL, S_LIST_TABLE,
  S_REC_ENTRY, S_REC_FALL, S_REC_RET,
  S_THR_ENTRY, S_THR_FALL, S_THR_RET, S_THR_MALLOC, S_THR_FREE,
  S_THRS_ENTRY, S_THRS_FALL,
  S_JD_ENTRY, S_JD_FALL, S_JT_ENTRY, S_JT_FALL,
  S_FORK_ENTRY, S_FORK_FALL, S_FORK_RET, S_FORK_MALLOC, S_FORK_FREE,
  S_DEEP_ENTRY, S_DEEP_FALL, S_DEEP_MALLOC,
  S_MAIN_ENTRY, S_MAIN_FALL, S_MAIN_RET, S_MAIN_RET2,
  S_TICK_ENTRY, S_TICK_FALL, S_SIG_ENTRY, S_SIG_FALL,
  S_COUNTER,
  S_COUNT
};

static const struct __mw_site __mw_sites[S_COUNT] = {
  [S_MAKE_ENTRY] = {MW_SITE_ENTRY, 60, "smoke.c", "make_node", "make_node"},
  [S_MAKE_FALL] = {MW_SITE_FALLOFF, 66, "smoke.c", "make_node", "make_node"},
  [S_MAKE_RET] = {MW_SITE_RETURN, 65, "smoke.c", "make_node", "make_node"},
  [S_MAKE_MALLOC] = {MW_SITE_MALLOC, 61, "smoke.c", "make_node", "malloc"},
  [S_LIST_ENTRY] = {MW_SITE_ENTRY, 70, "smoke.c", "list_test", "list_test"},
  [S_LIST_FALL] = {MW_SITE_FALLOFF, 110, "smoke.c", "list_test", "list_test"},
  [S_LIST_FREE_B] = {MW_SITE_FREE, 75, "smoke.c", "list_test", "free"},
  [S_LIST_FREE_A] = {MW_SITE_FREE, 76, "smoke.c", "list_test", "free"},
  [S_LIST_FREE_C] = {MW_SITE_FREE, 77, "smoke.c", "list_test", "free"},
  [S_LIST_STRDUP] = {MW_SITE_STRDUP, 80, "smoke.c", "list_test", "strdup"},
  [S_LIST_CALLOC] = {MW_SITE_CALLOC, 81, "smoke.c", "list_test", "calloc"},
  [S_LIST_REALLOC] = {MW_SITE_REALLOC, 82, "smoke.c", "list_test", "realloc"},
  [S_LIST_REALLOC0] = {MW_SITE_REALLOC, 83, "smoke.c", "list_test", "realloc"},
  [S_LIST_PM] = {MW_SITE_POSIX_MEMALIGN, 84, "smoke.c", "list_test", "posix_memalign"},
  [S_LIST_AL] = {MW_SITE_ALIGNED_ALLOC, 85, "smoke.c", "list_test", "aligned_alloc"},
  [S_LIST_FREE_S] = {MW_SITE_FREE, 90, "smoke.c", "list_test", "free"},
  [S_LIST_FREE_CAL] = {MW_SITE_FREE, 91, "smoke.c", "list_test", "free"},
  [S_LIST_FREE_PM] = {MW_SITE_FREE, 92, "smoke.c", "list_test", "free"},
  [S_LIST_FREE_AL] = {MW_SITE_FREE, 93, "smoke.c", "list_test", "free"},
  [S_LIST_MALLOC0] = {MW_SITE_MALLOC, 95, "smoke.c", "list_test", "malloc"},
  [S_LIST_FREE_Z] = {MW_SITE_FREE, 96, "smoke.c", "list_test", "free"},
  [S_LIST_FREE_NULL] = {MW_SITE_FREE, 97, "smoke.c", "list_test", "free"},
  [S_LIST_TABLE] = {MW_SITE_STATIC, 71, "smoke.c", "list_test", "table"},
  [S_REC_ENTRY] = {MW_SITE_ENTRY, 115, "smoke.c", "recurse", "recurse"},
  [S_REC_FALL] = {MW_SITE_FALLOFF, 121, "smoke.c", "recurse", "recurse"},
  [S_REC_RET] = {MW_SITE_RETURN, 119, "smoke.c", "recurse", "recurse"},
  [S_THR_ENTRY] = {MW_SITE_ENTRY, 125, "smoke.c", "thread_main", "thread_main"},
  [S_THR_FALL] = {MW_SITE_FALLOFF, 133, "smoke.c", "thread_main", "thread_main"},
  [S_THR_RET] = {MW_SITE_RETURN, 132, "smoke.c", "thread_main", "thread_main"},
  [S_THR_MALLOC] = {MW_SITE_MALLOC, 128, "smoke.c", "thread_main", "malloc"},
  [S_THR_FREE] = {MW_SITE_FREE, 130, "smoke.c", "thread_main", "free"},
  [S_THRS_ENTRY] = {MW_SITE_ENTRY, 136, "smoke.c", "threads_test", "threads_test"},
  [S_THRS_FALL] = {MW_SITE_FALLOFF, 142, "smoke.c", "threads_test", "threads_test"},
  [S_JD_ENTRY] = {MW_SITE_ENTRY, 146, "smoke.c", "jump_deep", "jump_deep"},
  [S_JD_FALL] = {MW_SITE_FALLOFF, 150, "smoke.c", "jump_deep", "jump_deep"},
  [S_JT_ENTRY] = {MW_SITE_ENTRY, 153, "smoke.c", "jump_test", "jump_test"},
  [S_JT_FALL] = {MW_SITE_FALLOFF, 160, "smoke.c", "jump_test", "jump_test"},
  [S_FORK_ENTRY] = {MW_SITE_ENTRY, 163, "smoke.c", "fork_test", "fork_test"},
  [S_FORK_FALL] = {MW_SITE_FALLOFF, 178, "smoke.c", "fork_test", "fork_test"},
  [S_FORK_RET] = {MW_SITE_RETURN, 172, "smoke.c", "fork_test", "fork_test"},
  [S_FORK_MALLOC] = {MW_SITE_MALLOC, 164, "smoke.c", "fork_test", "malloc"},
  [S_FORK_FREE] = {MW_SITE_FREE, 176, "smoke.c", "fork_test", "free"},
  [S_DEEP_ENTRY] = {MW_SITE_ENTRY, 181, "smoke.c", "deep", "deep"},
  [S_DEEP_FALL] = {MW_SITE_FALLOFF, 195, "smoke.c", "deep", "deep"},
  [S_DEEP_MALLOC] = {MW_SITE_MALLOC, 190, "smoke.c", "deep", "malloc"},
  [S_MAIN_ENTRY] = {MW_SITE_ENTRY, 198, "smoke.c", "main", "main"},
  [S_MAIN_FALL] = {MW_SITE_FALLOFF, 230, "smoke.c", "main", "main"},
  [S_MAIN_RET] = {MW_SITE_RETURN, 228, "smoke.c", "main", "main"},
  [S_MAIN_RET2] = {MW_SITE_RETURN, 201, "smoke.c", "main", "main"},
  [S_TICK_ENTRY] = {MW_SITE_ENTRY, 240, "smoke.c", "on_tick", "on_tick"},
  [S_TICK_FALL] = {MW_SITE_FALLOFF, 244, "smoke.c", "on_tick", "on_tick"},
  [S_SIG_ENTRY] = {MW_SITE_ENTRY, 247, "smoke.c", "signal_test", "signal_test"},
  [S_SIG_FALL] = {MW_SITE_FALLOFF, 262, "smoke.c", "signal_test", "signal_test"},
  [S_COUNTER] = {MW_SITE_STATIC, 35, "smoke.c", "", "counter"},
};
static struct __mw_unit __mw_u = {0u, S_COUNT, __mw_sites};
static struct __mw_unit *const __mw_unit_ref __attribute__((used, section("mw_units"))) = &__mw_u;

static struct node *make_node(int v)
{
  struct __mw_frame __mw_f __attribute__((cleanup(__mw_leave))) = __mw_enter(&__mw_u, S_MAKE_ENTRY, S_MAKE_FALL);
  struct node *n = __mw_malloc(&__mw_u, S_MAKE_MALLOC, sizeof *n);
  n->next = NULL;
  n->value = v;
  { __mw_f.site = __mw_u.base + S_MAKE_RET; return n; }
}

static void list_test(void)
{
  struct __mw_frame __mw_f __attribute__((cleanup(__mw_leave))) = __mw_enter(&__mw_u, S_LIST_ENTRY, S_LIST_FALL);
  static char table[100];
  static const struct __mw_static_ref __mw_s1 __attribute__((used, section("mw_statics"))) = {&__mw_u, S_LIST_TABLE, &table, sizeof(table)};
  struct node *a = make_node(1), *b = make_node(2), *c = make_node(3);
  a->next = b;
  b->next = c;
  __mw_free(&__mw_u, S_LIST_FREE_B, b); /* LINKED {c} */
  a->next = NULL;
  __mw_free(&__mw_u, S_LIST_FREE_A, a);
  __mw_free(&__mw_u, S_LIST_FREE_C, c);

  char *s = __mw_strdup(&__mw_u, S_LIST_STRDUP, "hello, heap");
  int *cal = __mw_calloc(&__mw_u, S_LIST_CALLOC, 10, sizeof(int));
  cal = __mw_realloc(&__mw_u, S_LIST_REALLOC, cal, 4000);
  char *gone = __mw_strdup(&__mw_u, S_LIST_STRDUP, "short");
  gone = __mw_realloc(&__mw_u, S_LIST_REALLOC0, gone, 0); /* frees, NULL */
  void *pm = NULL;
  if (__mw_posix_memalign(&__mw_u, S_LIST_PM, &pm, 64, 100) != 0) pm = NULL;
  void *al = __mw_aligned_alloc(&__mw_u, S_LIST_AL, 256, 512);
  table[0] = (char)(s[0] + (gone != NULL));
  counter += cal[0] + 1;
  __mw_free(&__mw_u, S_LIST_FREE_S, s);
  __mw_free(&__mw_u, S_LIST_FREE_CAL, cal);
  __mw_free(&__mw_u, S_LIST_FREE_PM, pm);
  __mw_free(&__mw_u, S_LIST_FREE_AL, al);
  void *z = __mw_malloc(&__mw_u, S_LIST_MALLOC0, 0);
  __mw_free(&__mw_u, S_LIST_FREE_Z, z);
  __mw_free(&__mw_u, S_LIST_FREE_NULL, NULL); /* not recorded */
  printf("list done %d\n", counter); /* stdio's buffer: an interposed ALLOC */
}

/* keeps buf whole: the compiler cannot see which byte is read */
__attribute__((noinline)) static int pick(const char *buf, int n) { return buf[(n * 37) & 255]; }

static int recurse(int n)
{
  struct __mw_frame __mw_f __attribute__((cleanup(__mw_leave))) = __mw_enter(&__mw_u, S_REC_ENTRY, S_REC_FALL);
  char buf[256];
  memset(buf, n, sizeof buf);
  if (n > 0) { __mw_f.site = __mw_u.base + S_REC_RET; return recurse(n - 1) + pick(buf, n); }
  { __mw_f.site = __mw_u.base + S_REC_RET; return 0; }
}

static void *thread_main(void *arg)
{
  struct __mw_frame __mw_f __attribute__((cleanup(__mw_leave))) = __mw_enter(&__mw_u, S_THR_ENTRY, S_THR_FALL);
  long n = (long)arg;
  for (long i = 0; i < n; i++) {
    void *p = __mw_malloc(&__mw_u, S_THR_MALLOC, (size_t)(16 + (i & 63)));
    *(volatile char *)p = 1;
    __mw_free(&__mw_u, S_THR_FREE, p);
  }
  { __mw_f.site = __mw_u.base + S_THR_RET; return NULL; }
}

static void threads_test(void)
{
  struct __mw_frame __mw_f __attribute__((cleanup(__mw_leave))) = __mw_enter(&__mw_u, S_THRS_ENTRY, S_THRS_FALL);
  pthread_t th[8];
  for (int i = 0; i < 8; i++) pthread_create(&th[i], NULL, thread_main, (void *)100000L);
  for (int i = 0; i < 8; i++) pthread_join(th[i], NULL);
  printf("threads done\n");
}

static jmp_buf env;

static void jump_deep(int n)
{
  struct __mw_frame __mw_f __attribute__((cleanup(__mw_leave))) = __mw_enter(&__mw_u, S_JD_ENTRY, S_JD_FALL);
  if (n == 0) longjmp(env, 1);
  jump_deep(n - 1);
}

static void jump_test(void)
{
  struct __mw_frame __mw_f __attribute__((cleanup(__mw_leave))) = __mw_enter(&__mw_u, S_JT_ENTRY, S_JT_FALL);
  if (__mw_resume(&__mw_f, setjmp(env)) == 0) {
    jump_deep(9); /* 10 frames: jump_deep(9) … jump_deep(0) */
  } else {
    printf("jumped back\n");
  }
}

static int fork_test(void)
{
  struct __mw_frame __mw_f __attribute__((cleanup(__mw_leave))) = __mw_enter(&__mw_u, S_FORK_ENTRY, S_FORK_FALL);
  char *p = __mw_malloc(&__mw_u, S_FORK_MALLOC, 100);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    recurse(3);
    char *q = __mw_malloc(&__mw_u, S_FORK_MALLOC, 200);
    __mw_free(&__mw_u, S_FORK_FREE, q);
    __mw_free(&__mw_u, S_FORK_FREE, p); /* the parent's block */
    exit(3);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  printf("child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  __mw_free(&__mw_u, S_FORK_FREE, p);
  { __mw_f.site = __mw_u.base + S_FORK_RET; return 0; }
}

static void deep(int n, const char *what)
{
  struct __mw_frame __mw_f __attribute__((cleanup(__mw_leave))) = __mw_enter(&__mw_u, S_DEEP_ENTRY, S_DEEP_FALL);
  if (n > 0) {
    deep(n - 1, what);
  } else if (!strcmp(what, "exit")) {
    exit(7);
  } else if (!strcmp(what, "abort")) {
    abort();
  } else if (!strcmp(what, "segv")) {
    *(volatile int *)(long)counter = 1;
  } else if (!strcmp(what, "spin")) {
    for (unsigned long i = 0;; i++) {
      void *p = __mw_malloc(&__mw_u, S_DEEP_MALLOC, 32);
      if (i % 1000 == 0) usleep(1000);
      if (i % 2) free(p); /* a plain free: the interposed one */
    }
  }
}

static volatile sig_atomic_t ticks;

static void on_tick(int sig)
{
  struct __mw_frame __mw_f __attribute__((cleanup(__mw_leave))) = __mw_enter(&__mw_u, S_TICK_ENTRY, S_TICK_FALL);
  (void)sig;
  ticks = ticks + 1;
  recurse(1);
}

static void signal_test(void)
{
  struct __mw_frame __mw_f __attribute__((cleanup(__mw_leave))) = __mw_enter(&__mw_u, S_SIG_ENTRY, S_SIG_FALL);
  struct itimerval it = {{0, 20}, {0, 20}};
  signal(SIGPROF, on_tick);
  setitimer(ITIMER_PROF, &it, NULL);
  for (long i = 0; i < 2000000; i++) {
    struct node *a = make_node((int)i);
    __mw_free(&__mw_u, S_LIST_FREE_A, a);
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_PROF, &off, NULL);
  printf("signal done\n");
}

int main(int argc, char **argv)
{
  struct __mw_frame __mw_f __attribute__((cleanup(__mw_leave))) = __mw_enter(&__mw_u, S_MAIN_ENTRY, S_MAIN_FALL);
  const char *what = argc > 1 ? argv[1] : "list";
  if (!strcmp(what, "list")) list_test();
  else if (!strcmp(what, "recurse")) printf("recurse %d\n", recurse(20));
  else if (!strcmp(what, "threads")) threads_test();
  else if (!strcmp(what, "longjmp")) { jump_test(); recurse(2); }
  else if (!strcmp(what, "fork")) fork_test();
  else if (!strcmp(what, "signal")) signal_test();
  else if (!strcmp(what, "exit") || !strcmp(what, "abort") || !strcmp(what, "segv") || !strcmp(what, "spin")) deep(4, what);
  else { fprintf(stderr, "unknown test %s\n", what); { __mw_f.site = __mw_u.base + S_MAIN_RET2; return 2; } }
  { __mw_f.site = __mw_u.base + S_MAIN_RET; return 0; }
}

static const struct __mw_static_ref __mw_s0 __attribute__((used, section("mw_statics"))) = {&__mw_u, S_COUNTER, &counter, sizeof(counter)};
