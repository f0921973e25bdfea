/* jumps.c — longjmp out of deep recursion, and a child process.
 *
 * dive() recurses 10 levels and longjmps back to main; the frames it skipped
 * must be closed (UNWIND) so later calls have the right depth.  Then the
 * program forks: the child allocates 3 blocks and writes its own trace; the
 * parent's trace holds none of the child's events.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static jmp_buf back;

static void dive(int n) {
  char pad[128];
  if (n < 0) return;
  pad[0] = (char)n;
  if (n == 0) longjmp(back, 1);
  dive(n - 1);
  pad[1] = pad[0];
}

static int after(void) { return 42; }

int main(void) {
  int status = 0;
  pid_t child;
  if (setjmp(back) == 0) {
    dive(10);
  }
  printf("back, after=%d\n", after());
  fflush(stdout);
  child = fork();
  if (child == 0) {
    void *a = malloc(11), *b = malloc(22), *c = malloc(33);
    free(a); free(b); free(c);
    _exit(0);
  }
  waitpid(child, &status, 0);
  printf("child exited %d\n", WEXITSTATUS(status));
  return 0;
}
