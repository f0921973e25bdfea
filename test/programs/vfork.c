/* vfork.c — a vfork child shares its parent's memory until it execs or
 * _exits; it must leave the parent's recording untouched.
 *
 * Expected: the child _exits with 5 without writing anything; the parent's
 * trace records all 4 of its allocations, before and after the vfork, and
 * ends normally.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  int status = 0;
  char *before = malloc(40), *after;
  pid_t pid = vfork();
  if (pid == 0) _exit(5);
  waitpid(pid, &status, 0);
  after = malloc(60);
  printf("vforked, status %d\n", WEXITSTATUS(status));
  free(before);
  free(after);
  return 0;
}
