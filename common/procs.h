// procs.h -- start copies of this program, wait for them, stop them (POSIX, Linux).
//
// For a lesson that runs one process per GPU (lesson 18 --procs; its NCCL
// side is in ranks.h): the parent starts one child per rank and must never
// hang on them. Plain host code, no
// CUDA: the parent of such a job creates no CUDA context, so nothing here
// touches the GPU. CUDA is not fork-safe: a child may use CUDA only after it
// has exec'd; with no context in the parent, nothing between fork and exec
// can trip on one. Include it after harness.h.
#ifndef PROCS_H
#define PROCS_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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
    if (!envp) { fprintf(stderr, "%s: out of host memory\n", g_prog); exit(1); }
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

// The command line as given (argv[argc] included), kept for the children
// before anything takes an option out of argv.
static inline char **copy_argv(int argc, char **argv)
{
    char **all = (char **)malloc(((size_t)argc + 1) * sizeof(char *));
    if (!all) { fprintf(stderr, "%s: out of host memory\n", g_prog); exit(1); }
    memcpy(all, argv, ((size_t)argc + 1) * sizeof(char *));
    return all;
}

// Removes the flag `flag` (an option the harness does not know, e.g.
// "--procs") from argv wherever getopt would read it as an option: not after
// "--", not as the value of an option that takes one. "flag=..." is bad input:
// one line, exit 2. Returns 1 if the flag was found.
static inline int take_flag(int *argc, char **argv, const char *flag, const char *who)
{
    int found = 0, out = 1, i = 1;
    size_t len = strlen(flag);
    for (; i < *argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) break;
        if (strcmp(a, flag) == 0) { found = 1; continue; }
        if (strncmp(a, flag, len) == 0 && a[len] == '=') {
            fprintf(stderr, "%s: %s takes no value: %.40s\n", who, flag, a);
            exit(2);
        }
        argv[out++] = argv[i];
        int takes_value = (a[0] == '-' && a[1] && strchr("nbrsdmk", a[1]) && a[2] == '\0') ||
                          strcmp(a, "--offset") == 0 || strcmp(a, "--flush") == 0;
        if (takes_value && i + 1 < *argc) argv[out++] = argv[++i]; // its value, whatever it says
    }
    for (; i < *argc; i++) argv[out++] = argv[i];
    argv[out] = NULL;
    *argc = out;
    return found;
}

// Asks a child for a number: starts this program again (spawn_self, less the
// variables that start with drop_prefix) with fd_var=<the write end of a
// pipe>; the child writes the number as text to that fd and exits 0. The
// parent reads it with a deadline of wait_s. A child that exits 1 has said
// why already (the parent exits 1 too); any other failure is one line naming
// `what` ("the GPUs": "counting the GPUs", "the process that counts the
// GPUs"), exit 1. Returns the number, > 0.
static inline int count_in_a_child(char **argv, const char *who, const char *drop_prefix, const char *fd_var,
                                   const char *what, double wait_s)
{
    int fd[2];
    if (pipe(fd) != 0) { fprintf(stderr, "%s: pipe: %s\n", who, strerror(errno)); exit(1); }
    fcntl(fd[0], F_SETFD, FD_CLOEXEC);
    char var[64];
    snprintf(var, sizeof var, "%s=%d", fd_var, fd[1]);
    const char *extra[] = {var};
    pid_t pid = spawn_self(who, argv, drop_prefix, extra, 1);
    close(fd[1]);
    char buf[32];
    size_t got = 0;
    double end = now_s() + wait_s;
    for (;;) { // until the child closes the pipe (it exited), or the deadline
        struct pollfd p = {fd[0], POLLIN, 0};
        int left_ms = (int)((end - now_s()) * 1e3);
        if (left_ms <= 0) {
            int alive = 1;
            fprintf(stderr, "%s: counting %s took over %.0f s; stopped\n", who, what, wait_s);
            stop_children(&pid, &alive, 1);
            exit(1);
        }
        if (poll(&p, 1, left_ms) <= 0) continue;
        ssize_t k = read(fd[0], buf + got, sizeof buf - 1 - got);
        if (k > 0) got += (size_t)k;
        else if (k == 0 || errno != EINTR) break;
    }
    close(fd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (WIFEXITED(st) && WEXITSTATUS(st) == 1) exit(1); // it said why
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        char status[160];
        describe_status(st, status, sizeof status);
        fprintf(stderr, "%s: the process that counts %s %s\n", who, what, status);
        exit(1);
    }
    buf[got] = '\0';
    int n = atoi(buf);
    if (n <= 0) { fprintf(stderr, "%s: could not count %s\n", who, what); exit(1); }
    return n;
}

#endif // PROCS_H
