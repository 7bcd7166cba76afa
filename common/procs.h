// procs.h -- start copies of this program, wait for them, stop them (POSIX, Linux).
//
// For a lesson that runs one process per GPU (lesson 18 --procs): the parent
// starts one child per rank and must never hang on them. Plain host code, no
// CUDA: the parent of such a job creates no CUDA context (CUDA is not
// fork-safe), so nothing here touches the GPU. Include it after harness.h.
#ifndef PROCS_H
#define PROCS_H

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROCS_MAX 64          // children one parent waits for
#define PROCS_LATE_EXIT_S 120.0 // once one child has exited, the others must follow within this
#define PROCS_STOP_GRACE_S 5.0  // SIGTERM, then SIGKILL after this long

extern char **environ;

static inline double now_s(void) // a monotonic clock, in seconds
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static inline void pause_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

// Starts this program again (/proc/self/exe) with the command line argv and
// this process's environment, less the variables whose names start with
// drop_prefix, plus extra[] ("NAME=value"). Everything is built before fork:
// the parent may have threads (NCCL's bootstrap root is one), and the child
// of a process with threads may call only async-signal-safe functions until
// exec. `who` names the program in error lines.
static inline pid_t spawn_self(const char *who, char **argv, const char *drop_prefix, const char **extra, int nextra)
{
    size_t n = 0, k = 0, drop = strlen(drop_prefix);
    while (environ[n]) n++;
    char **envp = (char **)malloc((n + (size_t)nextra + 1) * sizeof(char *));
    if (!envp) { fprintf(stderr, "out of host memory\n"); exit(1); }
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], drop_prefix, drop) != 0) envp[k++] = environ[i];
    for (int i = 0; i < nextra; i++) envp[k++] = (char *)extra[i];
    envp[k] = NULL;
    pid_t parent = getpid(), pid = fork();
    if (pid < 0) {
        fprintf(stderr, "%s: fork: %s\n", who, strerror(errno));
        exit(1); // children already started die with us (PR_SET_PDEATHSIG)
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); // the parent dies (killed by a time limit...): so does this child
        if (getppid() != parent) _exit(1); // it died before that line
        execve("/proc/self/exe", argv, envp);
        _exit(127);
    }
    free(envp);
    return pid;
}

static inline void describe_status(int st, char *buf, size_t len)
{
    if (WIFEXITED(st)) snprintf(buf, len, "exited with status %d", WEXITSTATUS(st));
    else if (WIFSIGNALED(st)) snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
    else snprintf(buf, len, "stopped (status 0x%x)", st);
}

// SIGTERM to every child still alive, SIGKILL to any left after
// PROCS_STOP_GRACE_S; gives up on one that will not go after as long again
// (never waits forever).
static inline void stop_children(const pid_t *pid, int *alive, int n)
{
    for (int sig = 0; sig < 2; sig++) {
        for (int r = 0; r < n; r++)
            if (alive[r]) kill(pid[r], sig ? SIGKILL : SIGTERM);
        double end = now_s() + PROCS_STOP_GRACE_S;
        for (;;) {
            int left = 0, st;
            for (int r = 0; r < n; r++)
                if (alive[r] && waitpid(pid[r], &st, WNOHANG) == pid[r]) alive[r] = 0;
            for (int r = 0; r < n; r++) left += alive[r];
            if (!left || now_s() > end) break;
            pause_ms(10);
        }
    }
}

// Waits for the n (<= PROCS_MAX) children, child r being rank r. The first
// one that fails (exit status not 0, or a signal) is named in one line; the
// others are stopped. A deadline for the whole job would stop long runs that
// are fine (a long list of sizes, -r 100000), so each child keeps its own
// deadlines, and the parent adds one when the first child has exited: the
// others must follow within PROCS_LATE_EXIT_S. Returns the parent's exit
// code: 0, 2 when the failing child exited 2 (bad input stays bad input), else 1.
static inline int wait_children(const char *who, const pid_t *pid, int n)
{
    int alive[PROCS_MAX], left = n, first = -1;
    double late = 0.0;
    if (n > PROCS_MAX) {
        fprintf(stderr, "%s: %d ranks, at most %d can be waited for\n", who, n, PROCS_MAX);
        return 1;
    }
    for (int r = 0; r < n; r++) alive[r] = 1;
    while (left) {
        for (int r = 0; r < n; r++) {
            int st = 0;
            if (!alive[r]) continue;
            pid_t got = waitpid(pid[r], &st, WNOHANG);
            if (got < 0 && errno != EINTR) { // lost: it can no longer be waited for
                fprintf(stderr, "%s: rank %d of %d: waitpid: %s; stopping the other ranks\n", who, r, n, strerror(errno));
                alive[r] = 0;
                stop_children(pid, alive, n);
                return 1;
            }
            if (got != pid[r]) continue;
            alive[r] = 0;
            left--;
            if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                char what[160];
                describe_status(st, what, sizeof what);
                fprintf(stderr, "%s: rank %d of %d %s; stopping the other ranks\n", who, r, n, what);
                stop_children(pid, alive, n);
                return WIFEXITED(st) && WEXITSTATUS(st) == 2 ? 2 : 1;
            }
            if (first < 0) {
                first = r;
                late = now_s() + PROCS_LATE_EXIT_S;
            }
        }
        if (left && first >= 0 && now_s() > late) {
            int r = 0;
            while (!alive[r]) r++;
            fprintf(stderr, "%s: rank %d of %d still running %.0f s after rank %d exited; stopping it\n", who, r, n,
                    PROCS_LATE_EXIT_S, first);
            stop_children(pid, alive, n);
            return 1;
        }
        if (left) pause_ms(5);
    }
    return 0;
}

#endif // PROCS_H
