/* other-stack.c — instrumented functions run on stacks that are not the
 * thread's own: a signal handler on an alternate signal stack (sigaltstack),
 * and a coroutine on a stack of its own (makecontext / swapcontext), both
 * entered 40 calls deep.  The runtime records a function entered on another
 * stack at the depth of the frame it was entered from, and closes no frame
 * of the thread's own stack for it: every function returns normally here,
 * (the coroutine is resumed to its end), so the trace has no UNWIND and
 * every frame opened is closed.
 *
 * Prints what the functions computed (the same with and without recording). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

static int leaf(int x) { return x + 1; }
static int nested(int x) { return leaf(x) * 2; }

static volatile sig_atomic_t from_handler;
static int from_coroutine;
static ucontext_t main_ctx, co_ctx;

static void on_signal(int signo) {
  (void)signo;
  from_handler = nested(7);
}

/* Suspends itself once, halfway, and is resumed to return (to uc_link). */
static void co_body(void) {
  from_coroutine = nested(5);
  swapcontext(&co_ctx, &main_ctx);
  from_coroutine += leaf(1);
}

static int deep(int n) {
  if (n == 0) {
    raise(SIGUSR1);
    swapcontext(&main_ctx, &co_ctx); /* into the coroutine, back at its swapcontext */
    swapcontext(&main_ctx, &co_ctx); /* again: it returns, through uc_link, to here */
    return leaf(0);
  }
  return deep(n - 1) + 1;
}

int main(void) {
  static char alt[1 << 16];
  stack_t ss;
  struct sigaction sa;
  char *co_stack = malloc(1 << 16);
  if (!co_stack) return 1;
  memset(&ss, 0, sizeof ss);
  ss.ss_sp = alt;
  ss.ss_size = sizeof alt;
  if (sigaltstack(&ss, NULL) != 0) return 1;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGUSR1, &sa, NULL) != 0) return 1;
  if (getcontext(&co_ctx) != 0) return 1;
  co_ctx.uc_stack.ss_sp = co_stack;
  co_ctx.uc_stack.ss_size = 1 << 16;
  co_ctx.uc_link = &main_ctx;
  makecontext(&co_ctx, co_body, 0);
  int d = deep(40);
  printf("deep %d, handler %d, coroutine %d, after %d\n", d, (int)from_handler, from_coroutine, nested(1));
  free(co_stack);
  return 0;
}
