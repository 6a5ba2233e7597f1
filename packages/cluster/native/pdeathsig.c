/*
 * fencekit-pdeathsig: runs a server so that the kernel SIGKILLs it when the process that started it dies, even by
 * SIGKILL, when no exit handler can run. Usage: fencekit-pdeathsig <expected-parent-pid> <program> [args...]
 * The death signal survives execve, so the server itself (same pid) carries it.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s <parent-pid> <program> [args...]\n", argv[0]);
    return 2;
  }
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
    perror("prctl(PR_SET_PDEATHSIG)");
    return 1;
  }
  /* The parent may have died between fork and prctl: then nobody would ever kill us. */
  if (getppid() != (pid_t)atol(argv[1])) return 1;
  execvp(argv[2], &argv[2]);
  perror("execvp");
  return 127;
}
