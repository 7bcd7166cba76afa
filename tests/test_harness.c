// Host unit tests of common/harness.h, compiled as C11 (no CUDA).
// Prints "ok NAME" or "not ok NAME (why)" per check; exit 1 if any failed.
#define _POSIX_C_SOURCE 200809L // alarm(): a parser that hangs fails instead of stalling the tests
#include <signal.h>
#include <time.h>
#include <unistd.h>

// A lesson may set its own default n; this file does, to test that it takes.
#define LESSON_DEFAULT_N ((size_t)1 << 20)
#include "harness.h"
#include "no_gpu.h" // device.h's messages, without the GPU half

static int g_bad = 0;

#define CHECK(cond, name)                                                   \
    do {                                                                    \
        if (cond)                                                           \
            printf("ok %s\n", name);                                        \
        else {                                                              \
            printf("not ok %s (%s:%d: %s)\n", name, __FILE__, __LINE__, #cond); \
            g_bad++;                                                        \
        }                                                                   \
    } while (0)

static const LessonInfo runtime_info = {"test_lesson", BLOCK_RUNTIME, 256, NULL};
static const LessonInfo fixed_info = {"test_lesson", BLOCK_FIXED, 256, "BLOCK_SIZE"};
static const LessonInfo none_info = {"test_lesson", BLOCK_NONE, 1, NULL};

static char g_err[512]; // the last parse's message

// Parses "PROG ARGS..." (space-separated); returns parse_options_r's code.
static int parse_prog(const char *prog, const char *line, Options *opt, const LessonInfo *info)
{
    static char buf[8192];
    char *argv[64];
    int argc = 0;
    snprintf(buf, sizeof buf, "%s %s", prog, line);
    for (char *tok = strtok(buf, " "); tok && argc < 63; tok = strtok(NULL, " ")) argv[argc++] = tok;
    argv[argc] = NULL;
    return parse_options_r(argc, argv, opt, info, g_err, sizeof g_err);
}
static int parse_line(const char *line, Options *opt, const LessonInfo *info)
{
    return parse_prog("./lesson04", line, opt, info);
}

static void test_parse_count(void)
{
    uint64_t v = 0;
    CHECK(parse_count("1048576", &v) == 0 && v == 1048576, "count: plain integer");
    CHECK(parse_count("0", &v) == 0 && v == 0, "count: zero");
    CHECK(parse_count("1e6", &v) == 0 && v == 1000000, "count: 1e6");
    CHECK(parse_count("1.5e3", &v) == 0 && v == 1500, "count: 1.5e3");
    CHECK(parse_count("2^20", &v) == 0 && v == 1048576, "count: 2^20");
    CHECK(parse_count("2^20+3", &v) == 0 && v == 1048579, "count: 2^20+3");
    CHECK(parse_count("2^31-1", &v) == 0 && v == 2147483647ULL, "count: 2^31-1");
    CHECK(parse_count("2^31+5", &v) == 0 && v == 2147483653ULL, "count: 2^31+5");
    CHECK(parse_count("1e6+1", &v) == 0 && v == 1000001, "count: 1e6+1");
    CHECK(parse_count("-5", &v) == -1, "count: negative rejected");
    CHECK(parse_count("abc", &v) == -1, "count: letters rejected");
    CHECK(parse_count("12x", &v) == -1, "count: trailing junk rejected");
    CHECK(parse_count("1e6x", &v) == -1, "count: junk after exponent rejected");
    CHECK(parse_count("1.5", &v) == -1, "count: fraction rejected");
    CHECK(parse_count("2^", &v) == -1, "count: missing exponent rejected");
    CHECK(parse_count("2^20+", &v) == -1, "count: missing adjustment rejected");
    CHECK(parse_count("3-5", &v) == -1, "count: result below zero rejected");
    CHECK(parse_count("", &v) == -1, "count: empty rejected");
    CHECK(parse_count(" 5", &v) == -1, "count: leading space rejected");
    CHECK(parse_count("99999999999999999999999", &v) == -2, "count: overflow is too large");
    CHECK(parse_count("2^70", &v) == -2, "count: 2^70 is too large");
    CHECK(parse_count("1e30", &v) == -2, "count: 1e30 is too large");
}

static void test_parse_options(void)
{
    Options o;
    CHECK(parse_line("", &o, &runtime_info) == 0 && o.n == LESSON_DEFAULT_N && o.block == 256 && o.reps == 0 &&
              o.dist == DIST_INTS && o.seed == DEFAULT_SEED && !o.csv && !o.check_only && o.offset == 0,
          "options: defaults");
    CHECK(parse_line("-n 2^20+3 -b 128 -r 7 -s 42 -d uniform --offset 3 --csv --check", &o, &runtime_info) == 0 &&
              o.n == 1048579 && o.block == 128 && o.reps == 7 && o.seed == 42 && o.dist == DIST_UNIFORM &&
              o.offset == 3 && o.csv && o.check_only,
          "options: all set");
    CHECK(parse_line("--csv-header", &o, &runtime_info) == 0 && o.csv && o.csv_header, "options: --csv-header implies --csv");
    CHECK(parse_line("-n 0", &o, &runtime_info) == 0 && o.n == 0, "options: n = 0 allowed");
    CHECK(parse_line("-h", &o, &runtime_info) == 1, "options: -h asks for usage");
    const char *bad[] = {"-n abc", "-n -5", "-n 1e6x", "-n 1e30", "-n", "--bogus", "-x", "-r 0", "-r -1",
                         "-d gauss", "-s -1", "-s 12z", "--offset 99999", "--offset -1", "stray", "-b 100",
                         "-b 16", "-b 2048", "-b 0", "-b abc"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char name[96];
        snprintf(name, sizeof name, "options: '%s' rejected", bad[i]);
        CHECK(parse_line(bad[i], &o, &runtime_info) == 2, name);
    }
    CHECK(parse_line("-n 0,31,2^20+3 -s 1,2 -d ints,uniform --offset 0,3 -b 32,1024", &o, &runtime_info) == 0 &&
              o.n_count == 3 && o.n_list[0] == 0 && o.n_list[1] == 31 && o.n_list[2] == 1048579 && o.n == 0 &&
              o.seed_count == 2 && o.seed_list[1] == 2 && o.dist_count == 2 && o.dist_list[0] == DIST_INTS &&
              o.dist_list[1] == DIST_UNIFORM && o.offset_count == 2 && o.offset_list[1] == 3 && o.block_count == 2 &&
              o.block_list[0] == 32 && o.block_list[1] == 1024 && o.block == 32,
          "options: comma-separated lists");
    CHECK(parse_line("-n 5,6 -n 7", &o, &runtime_info) == 0 && o.n_count == 1 && o.n == 7,
          "options: a repeated option replaces its list");
    CHECK(parse_line("", &o, &runtime_info) == 0 && o.n_count == 1 && o.seed_count == 1 && o.dist_count == 1 &&
              o.offset_count == 1 && o.block_count == 1,
          "options: one item each by default");
    const char *bad_lists[] = {"-n 1,,2", "-n 1,", "-n ,1", "-n 1,abc", "-n 5,1e30", "-s 1,-2", "-d ints,gauss",
                               "--offset 1,99999", "-b 64,100", "-n 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,"
                               "21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,"
                               "49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65"};
    for (size_t i = 0; i < sizeof bad_lists / sizeof bad_lists[0]; i++) {
        char name[96];
        snprintf(name, sizeof name, "options: list '%.40s' rejected", bad_lists[i]);
        CHECK(parse_line(bad_lists[i], &o, &runtime_info) == 2, name);
    }
    CHECK(parse_line("-b 256", &o, &fixed_info) == 0, "options: fixed block accepts its own value");
    CHECK(parse_line("-b 128", &o, &fixed_info) == 2, "options: fixed block rejects another value");
    CHECK(parse_line("-b 32", &o, &none_info) == 2, "options: one-thread lesson rejects -b");
    CHECK(parse_line("-m 4 -k 8", &o, &runtime_info) == 2, "options: -m/-k rejected by a lesson without shapes");
    g_takes_shape = 1;
    CHECK(parse_line("-m 1000 -k 2^10", &o, &runtime_info) == 0 && o.have_shape && o.rows == 1000 && o.cols == 1024 &&
              !o.have_n,
          "options: -m/-k give a shape where taken");
    CHECK(parse_line("-m 0 -k 5", &o, &runtime_info) == 0 && o.have_shape && o.rows == 0 && !o.have_n,
          "options: a 0-row shape taken");
    CHECK(parse_line("-m 2 -k 3 -n 5", &o, &runtime_info) == 2 && strstr(g_err, "not both"),
          "options: -n beside -m/-k refused, not silently ignored");
    CHECK(parse_line("-m 4", &o, &runtime_info) == 2, "options: -m without -k rejected");
    CHECK(parse_line("-m x -k 4", &o, &runtime_info) == 2, "options: -m not a count rejected");
    CHECK(parse_line("-m 2^40 -k 2^40", &o, &runtime_info) == 2, "options: too large a shape rejected");
    CHECK(parse_line("", &o, &runtime_info) == 0 && !o.have_shape && !o.have_n, "options: no shape, no -n by default");
    g_takes_shape = 0;
    char err[512];
    char *argv[] = {"prog", "-b", "128", NULL};
    parse_options_r(3, argv, &o, &fixed_info, err, sizeof err);
    CHECK(strstr(err, "BLOCK_SIZE = 256") != NULL && strchr(err, '\n') == NULL,
          "options: fixed block error names the constant, one line");
}

// SIGALRM: a parse that never returned. Say so (write() is safe here) and stop.
static void on_hang(int sig)
{
    static const char msg[] = "not ok parser returns within 5 s on every input (it hung)\n";
    (void)sig;
    if (write(1, msg, sizeof msg - 1) < 0) _exit(1);
    _exit(1);
}

// Inputs that once spun or could overflow: each must be answered at once.
static void test_parser_bounded(void)
{
    uint64_t v = 0;
    Options o;
    signal(SIGALRM, on_hang);
    alarm(5);
    clock_t t0 = clock();
    CHECK(parse_count("1^99999999999999", &v) == 0 && v == 1, "count: 1^99999999999999 is 1, at once");
    CHECK(parse_count("0^99999999999999", &v) == 0 && v == 0, "count: 0^99999999999999 is 0, at once");
    CHECK(parse_count("1^999999999999999999999999", &v) == 0 && v == 1, "count: 1^(beyond 2^64) is 1");
    CHECK(parse_count("2^99999999999999", &v) == -2, "count: 2^99999999999999 is too large, at once");
    CHECK(parse_count("2^999999999999999999999999", &v) == -2, "count: 2^(beyond 2^64) is too large");
    CHECK(parse_count("0^0", &v) == 0 && v == 1, "count: 0^0 is 1");
    CHECK(parse_count("2^63", &v) == 0 && v == (uint64_t)1 << 63, "count: 2^63 fits");
    CHECK(parse_count("2^64", &v) == -2, "count: 2^64 is too large");
    CHECK(parse_count("3^40", &v) == 0 && v == 12157665459056928801ULL && parse_count("3^41", &v) == -2,
          "count: 3^40 fits, 3^41 is too large");
    CHECK(parse_count("2^63+99999999999999999999", &v) == -2, "count: a huge +K is too large");
    CHECK(parse_line("-n 1^99999999999999", &o, &runtime_info) == 0 && o.n == 1, "options: -n 1^99999999999999 is 1");
    CHECK(parse_line("-n 2^99999999999999", &o, &runtime_info) == 2 && strncmp(g_err, "too many elements", 17) == 0,
          "options: -n 2^99999999999999 is too many elements");
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    alarm(0);
    CHECK(secs < 0.5, "parser: every bounded case answered in under 0.5 s of CPU");
}

static void test_leading_zeros_and_seeds(void)
{
    uint64_t v = 0;
    Options o;
    CHECK(parse_count("000", &v) == -3 && parse_count("007", &v) == -3 && parse_count("2^020", &v) == -3 &&
              parse_count("2^20+03", &v) == -3 && parse_count("00.5e3", &v) == -3,
          "count: a leading zero is refused (-3)");
    CHECK(parse_count("0.5e3", &v) == 0 && v == 500, "count: 0.5e3 is 500");
    CHECK(parse_count("10", &v) == 0 && v == 10 && parse_count("2^0", &v) == 0 && v == 1, "count: 10 and 2^0");
    CHECK(parse_line("-n 1,000", &o, &runtime_info) == 2 && strstr(g_err, "1000 or 1e3") && strstr(g_err, "-n 1,000"),
          "options: -n 1,000 refused, suggesting 1000 or 1e3");
    CHECK(parse_line("-n 1,000,000", &o, &runtime_info) == 2, "options: -n 1,000,000 refused");
    CHECK(parse_line("-n 1,0", &o, &runtime_info) == 0 && o.n_count == 2 && o.n_list[1] == 0, "options: -n 1,0 is two runs");
    CHECK(parse_line("--offset 03", &o, &runtime_info) == 2 && strstr(g_err, "leading zero"), "options: --offset 03 refused");
    CHECK(parse_line("-s 010", &o, &runtime_info) == 0 && o.seed == 10, "seed: 010 is ten (decimal, not octal)");
    CHECK(parse_line("-s 0", &o, &runtime_info) == 0 && o.seed == 0, "seed: 0");
    CHECK(parse_line("-s 000", &o, &runtime_info) == 0 && o.seed == 0, "seed: 000 is 0");
    CHECK(parse_line("-s 1,000", &o, &runtime_info) == 2 && strstr(g_err, "1000 or 1e3"),
          "seed: -s 1,000 refused as a list with a leading zero, not seeds 1 and 0");
    CHECK(parse_line("-s 0,1", &o, &runtime_info) == 0 && o.seed_count == 2, "seed: -s 0,1 is two runs");
    CHECK(parse_line("-n 007", &o, &runtime_info) == 2 && strstr(g_err, "leading zero") && !strstr(g_err, "commas"),
          "options: -n 007 refused for its leading zero, without talk of commas");
    CHECK(parse_line("-b 2048", &o, &runtime_info) == 2 && strstr(g_err, "power of two in 32..1024"),
          "block: -b 2048 names the range a runtime block size takes");
    CHECK(parse_line("-b abc", &o, &fixed_info) == 2 && strstr(g_err, "compile-time constant BLOCK_SIZE = 256"),
          "block: a fixed lesson names its constant for any -b but its own");
    CHECK(parse_line("-s 18446744073709551615", &o, &runtime_info) == 0 && o.seed == UINT64_MAX, "seed: 2^64-1");
    const char *bad_seeds[] = {"-s 0x10", "-s 18446744073709551616", "-s 1e3", "-s +5", "-s 5 5", "-s 08x"};
    for (size_t i = 0; i < sizeof bad_seeds / sizeof bad_seeds[0]; i++) {
        char name[96];
        snprintf(name, sizeof name, "seed: '%s' rejected", bad_seeds[i]);
        CHECK(parse_line(bad_seeds[i], &o, &runtime_info) == 2, name);
    }
}

static void test_messages(void)
{
    Options o;
    CHECK(parse_line("-Z5", &o, &runtime_info) == 2 && strstr(g_err, "unknown option -Z") && !strstr(g_err, "lesson04"),
          "message: -Z5 names -Z (optopt), not the program");
    CHECK(parse_line("--csv -Z", &o, &runtime_info) == 2 && strstr(g_err, "unknown option -Z"),
          "message: -Z after --csv names -Z");
    CHECK(parse_line("--csv -b 64 -q7", &o, &runtime_info) == 2 && strstr(g_err, "unknown option -q"),
          "message: -q7 in the middle names -q");
    CHECK(parse_line("--csv=1", &o, &runtime_info) == 2 && strstr(g_err, "--csv takes no value"),
          "message: --csv=1 says --csv takes no value");
    CHECK(parse_line("--check=yes", &o, &runtime_info) == 2 && strstr(g_err, "--check takes no value"),
          "message: --check=yes says --check takes no value");
    CHECK(parse_line("--bogus", &o, &runtime_info) == 2 && strncmp(g_err, "unknown option", 14) == 0 &&
              strstr(g_err, "--bogus"),
          "message: --bogus is an unknown option");
    CHECK(parse_line("--c", &o, &runtime_info) == 2 && strncmp(g_err, "ambiguous option", 16) == 0,
          "message: --c is ambiguous");
    CHECK(parse_line("--off 3", &o, &runtime_info) == 0 && o.offset == 3, "options: a unique prefix --off is --offset");
    CHECK(parse_line("-n", &o, &runtime_info) == 2 && strstr(g_err, "a value is needed: -n"), "message: -n needs a value");
    CHECK(parse_line("--offset", &o, &runtime_info) == 2 && strstr(g_err, "a value is needed: --offset"),
          "message: --offset needs a value");
    CHECK(parse_line("-n abc", &o, &runtime_info) == 2 && strncmp(g_err, "not a count", 11) == 0,
          "message: the reason comes first");
    char line[512], name[64];
    memset(name, 'x', 50);
    name[50] = '\0';
    snprintf(line, sizeof line, "-n %s", name);
    CHECK(parse_line(line, &o, &runtime_info) == 2 && strncmp(g_err, "not a count", 11) == 0 && strstr(g_err, "...") &&
              !strstr(g_err, name) && strlen(g_err) < 160,
          "message: a long value is cut to 40 characters after the reason");
    char big[400];
    memset(big, '7', 300);
    big[300] = '\0';
    snprintf(line, sizeof line, "-s %s", big);
    CHECK(parse_line(line, &o, &runtime_info) == 2 && strstr(g_err, "...") && strlen(g_err) < 160,
          "message: a 300-character list value is cut");
    snprintf(line, sizeof line, "--flush %s", big);
    CHECK(parse_line(line, &o, &runtime_info) == 2 && strncmp(g_err, "the flush", 9) == 0 && strlen(g_err) < 160,
          "message: a long --flush value is cut");
    const char *all_bad[] = {"-Z5", "--csv=1", "-n 1,000", "-n abc", "--bogus=3", "-n", "-s 0x1", "--flush x",
                             "-m 3 -k 4", "stray", "-b 100", "-r 0"};
    int one_line = 1;
    for (size_t i = 0; i < sizeof all_bad / sizeof all_bad[0]; i++)
        if (parse_line(all_bad[i], &o, &runtime_info) != 2 || strchr(g_err, '\n') || g_err[0] == '\0') one_line = 0;
    CHECK(one_line, "message: every bad input gives code 2 and one non-empty line");
}

// "-O a,b,c..." with count items, appended to buf.
static void add_list(char *buf, size_t len, const char *opt, int count)
{
    size_t at = strlen(buf);
    at += (size_t)snprintf(buf + at, len - at, " %s ", opt);
    for (int i = 1; i <= count && at < len; i++) at += (size_t)snprintf(buf + at, len - at, i > 1 ? ",%d" : "%d", i);
}

static void test_run_cap(void)
{
    Options o;
    static char line[4096];
    line[0] = '\0';
    add_list(line, sizeof line, "-n", 64);
    add_list(line, sizeof line, "-s", 64);
    CHECK(parse_line(line, &o, &runtime_info) == 0 && o.n_count == 64 && o.seed_count == 64,
          "runs: 64 x 64 = 4096 combinations accepted");
    strcat(line, " -d ints,uniform");
    CHECK(parse_line(line, &o, &runtime_info) == 2 && strncmp(g_err, "too many runs", 13) == 0 && strstr(g_err, "8192"),
          "runs: 8192 combinations refused with the count");
    line[0] = '\0';
    add_list(line, sizeof line, "-n", 64);
    add_list(line, sizeof line, "-s", 64);
    add_list(line, sizeof line, "--offset", 64);
    strcat(line, " -d ints,uniform -b 32,64,128,256,512,1024");
    CHECK(parse_line(line, &o, &runtime_info) == 2 && strstr(g_err, "3145728"), "runs: 64^3 x 2 x 6 refused, no overflow");
}

static void test_flush_option(void)
{
    Options o;
    CHECK(parse_line("", &o, &runtime_info) == 0 && o.flush == FLUSH_DIRTY, "flush: dirty by default");
    CHECK(parse_line("--flush clean", &o, &runtime_info) == 0 && o.flush == FLUSH_CLEAN, "flush: --flush clean");
    CHECK(parse_line("--flush=clean", &o, &runtime_info) == 0 && o.flush == FLUSH_CLEAN, "flush: --flush=clean");
    CHECK(parse_line("--flush clean --flush dirty", &o, &runtime_info) == 0 && o.flush == FLUSH_DIRTY,
          "flush: the last --flush wins");
    const char *bad[] = {"--flush", "--flush foo", "--flush Clean", "--flush clean,dirty", "--flush ''"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char name[96];
        snprintf(name, sizeof name, "flush: '%s' rejected", bad[i]);
        CHECK(parse_line(bad[i], &o, &runtime_info) == 2, name);
    }
}

static void test_exercise_defaults(void)
{
    Options o;
    static const size_t want[] = {0, 1, 2, 33, 1000, (1u << 20) + 3, 1u << 24};
    int same = parse_prog("./exercise04", "", &o, &runtime_info) == 0 && o.n_count == 7 && o.have_n &&
               o.dist_count == 2 && o.dist_list[0] == DIST_INTS && o.dist_list[1] == DIST_UNIFORM;
    for (int i = 0; same && i < 7; i++) same = o.n_list[i] == want[i];
    CHECK(same, "exercise: no -n checks 0,1,2,33,1000,2^20+3,2^24 with both inputs");
    CHECK(parse_prog("build/x/solution12", "--check", &o, &runtime_info) == 0 && o.n_count == 7 && o.dist_count == 2,
          "exercise: a solution (by its path's basename) does the same");
    CHECK(parse_prog("exercise04", "-d uniform", &o, &runtime_info) == 0 && o.n_count == 7 && o.dist_count == 1 &&
              o.dist == DIST_UNIFORM,
          "exercise: -d given keeps its list");
    CHECK(parse_prog("exercise04", "-n 5", &o, &runtime_info) == 0 && o.n_count == 1 && o.n == 5 && o.dist_count == 1 &&
              o.dist == DIST_INTS,
          "exercise: with -n it runs as a lesson");
    CHECK(parse_prog("./lesson04", "", &o, &runtime_info) == 0 && o.n_count == 1 && !o.have_n, "exercise: a lesson keeps one n");
    CHECK(parse_prog("./my_exercise04", "", &o, &runtime_info) == 0 && o.n_count == 1, "exercise: only names starting so");
    g_takes_shape = 1;
    CHECK(parse_prog("exercise17", "-m 4 -k 8", &o, &runtime_info) == 0 && o.n_count == 1 && o.have_shape,
          "exercise: a shape given takes no size list");
    g_takes_shape = 0;
}

// The usage text that program `prog` prints for -h (empty if no temporary file).
static const char *usage_of(const char *prog)
{
    static char text[8192];
    size_t got = 0;
    Options o;
    FILE *f = tmpfile();
    if (f) {
        parse_prog(prog, "", &o, &runtime_info);
        harness_usage(f, &runtime_info);
        rewind(f);
        got = fread(text, 1, sizeof text - 1, f);
        fclose(f);
    }
    text[got] = '\0';
    return text;
}

static void test_usage(void)
{
    const char *text = usage_of("./exercise04");
    CHECK(strncmp(text, "usage: exercise04", 17) == 0, "usage: names the program");
    CHECK(strstr(text, "--flush dirty|clean") != NULL, "usage: lists --flush dirty|clean");
    CHECK(strstr(text, "0,1,2,33,1000,2^20+3,2^24") != NULL, "usage: documents the exercise sizes");
    CHECK(strstr(text, "default: the list below;") != NULL && strstr(text, "default 2^") == NULL,
          "usage: an exercise's default n is the list, not the lesson's n");
    text = usage_of("./lesson04");
    CHECK(strstr(text, "default 2^20;") != NULL && DEFAULT_N == (size_t)1 << 26,
          "usage: shows the lesson's own default n (LESSON_DEFAULT_N)");
    char buf[32];
    CHECK(strcmp(count_text(1024, buf, sizeof buf), "2^10") == 0 && strcmp(count_text(1000, buf, sizeof buf), "1000") == 0 &&
              strcmp(count_text(3, buf, sizeof buf), "3") == 0,
          "usage: counts written as 2^k where they are powers of two");
}

static void test_tolerance(void)
{
    CHECK(float_ulp(1.0) == ldexp(1.0, -23) && float_ulp(1.5) == ldexp(1.0, -23) && float_ulp(0.75) == ldexp(1.0, -24),
          "tolerance: float_ulp is the float spacing");
    CHECK(float_ulp(0.0) == ldexp(1.0, -149) && float_ulp(-2.0) == ldexp(1.0, -22), "tolerance: float_ulp at 0 and < 0");
    CHECK(tolerance_for(3.0, 1e6) == 10.0, "tolerance: 1e-5 * scale when that is larger");
    CHECK(tolerance_for(1e8, 1.0) == 8.0, "tolerance: never below the answer's rounding");
    double third = 1.0 / 3.0;
    CHECK(check_result((float)third, third, 1e-5 * 1e-4), "tolerance: the rounded float answer passes a tiny tol");
    CHECK(check_result((float)100000001.0, 100000001.0, 0.0), "tolerance: tol 0 still allows the answer's rounding");
    CHECK(!check_result(100000016.0f, 100000001.0, 0.0), "tolerance: two float steps off fails");
    CHECK(!check_result((float)third, third, -1.0), "tolerance: exact mode stays exact");
    Report r;
    memset(&r, 0, sizeof r);
    r.lesson = "x";
    r.variant = "y";
    r.gpu = "z";
    r.result = 100000000.0f;
    r.expected = 100000001.0;
    r.tol = 1e-3;
    r.pass = 1;
    char line[768];
    format_human(line, sizeof line, &r);
    CHECK(strstr(line, "tol 8)") != NULL, "tolerance: the report prints the tolerance applied");
}

static void test_input(void)
{
    enum { N = 1000 };
    static float whole[N], part[N];
    int64_t s1 = 0, a1 = 0, s2 = 0, a2 = 0;
    for (int d = 0; d < 2; d++) {
        s1 = a1 = s2 = a2 = 0;
        fill_input(whole, 0, N, 7, d, &s1, &a1);
        // the same elements made in odd slices must match, bit for bit
        size_t cuts[] = {0, 1, 3, 17, 18, 333, 500, 999, N};
        for (size_t c = 0; c + 1 < sizeof cuts / sizeof cuts[0]; c++)
            fill_input(part + cuts[c], cuts[c], cuts[c + 1] - cuts[c], 7, d, &s2, &a2);
        CHECK(memcmp(whole, part, sizeof whole) == 0 && s1 == s2 && a1 == a2,
              d ? "input: uniform slices equal the whole" : "input: ints slices equal the whole");
    }
    int ok = 1, seen_neg = 0, seen_pos = 0;
    int64_t s = 0, a = 0;
    fill_input(whole, 0, N, 1, DIST_INTS, &s, &a);
    int64_t check = 0;
    for (int i = 0; i < N; i++) {
        float x = whole[i];
        int v = (int)x;
        if ((float)v != x || v < -15 || v > 15 || v % 2 == 0) ok = 0;
        seen_neg |= v < 0;
        seen_pos |= v > 0;
        check += v;
    }
    CHECK(ok && seen_neg && seen_pos && check == s, "input: ints are odd integers in [-15, 15], sum exact");
    s = a = 0;
    fill_input(whole, 0, N, 1, DIST_UNIFORM, &s, &a);
    ok = 1;
    for (int i = 0; i < N; i++)
        if (!(whole[i] >= -1.0f && whole[i] < 1.0f)) ok = 0;
    double exact = (double)s * input_scale(DIST_UNIFORM);
    CHECK(ok, "input: uniform in [-1, 1)");
    CHECK(neumaier_sum(whole, N) == exact, "reference: compensated sum equals the exact sum");
    int64_t s_other = 0, a_other = 0;
    fill_input(part, 0, N, 2, DIST_UNIFORM, &s_other, &a_other);
    CHECK(memcmp(whole, part, sizeof whole) != 0, "input: another seed gives other data");
    // cancellation that defeats a plain float sum, not the compensated one
    float tricky[4] = {1e8f, 1.0f, -1e8f, 1.0f};
    CHECK(neumaier_sum(tricky, 4) == 2.0, "reference: compensated sum survives cancellation");
}

static void test_check_and_median(void)
{
    CHECK(check_result(12.0f, 12.0, -1.0), "check: exact equal passes");
    CHECK(!check_result(13.0f, 12.0, -1.0), "check: exact off by one fails");
    CHECK(!check_result(NAN, 12.0, -1.0) && !check_result(NAN, 12.0, 1e9), "check: NaN fails");
    CHECK(check_result(1.0005f, 1.0, 1e-3) && !check_result(1.002f, 1.0, 1e-3), "check: tolerance bound");
    double t1[] = {5, 1, 3};
    double med, mn, mx;
    median_min_max(t1, 3, &med, &mn, &mx);
    CHECK(med == 3 && mn == 1 && mx == 5, "median: odd count");
    double t2[] = {4, 1, 3, 2};
    median_min_max(t2, 4, &med, &mn, &mx);
    CHECK(med == 2.5 && mn == 1 && mx == 4, "median: even count");
}

static int count_char(const char *s, char c)
{
    int k = 0;
    for (; *s; s++) k += *s == c;
    return k;
}

static void test_report(void)
{
    Report r;
    memset(&r, 0, sizeof r);
    r.lesson = "12_single_pass";
    r.variant = "atomic";
    r.gpu = "NVIDIA H200, test";
    r.n = 67108864;
    r.bytes = 67108864.0 * 4;
    r.reps = 10;
    r.median_us = 62.1;
    r.min_us = 61.0;
    r.max_us = 70.0;
    r.peak_gbs = 4800;
    r.result = 12.0f;
    r.expected = 12.0;
    r.tol = -1;
    r.pass = 1;
    char line[768];
    format_csv(line, sizeof line, &r);
    CHECK(count_char(line, ',') == count_char(CSV_HEADER, ',') && count_char(CSV_HEADER, ',') == 14,
          "csv: 15 columns, as many as the header");
    CHECK(strstr(line, "12_single_pass,atomic,NVIDIA H200  test,67108864,268435456,10,62.100,61.000,70.000,") == line,
          "csv: columns in order, comma in GPU name replaced");
    CHECK(strstr(line, ",4322.6,90.1,12,12,0,PASS") != NULL, "csv: GB/s, % of peak, result, status");
    format_human(line, sizeof line, &r);
    CHECK(strstr(line, "PASS  (exact)") && strstr(line, "4322.6 GB/s") && strstr(line, "90% of 4800"),
          "human: GB/s, % of peak and verdict");
    r.result = 13.0f;
    r.pass = 0;
    format_human(line, sizeof line, &r);
    CHECK(strstr(line, "FAIL  got 13 expected 12") != NULL, "human: failure shows got and expected");
}

// The two lines of "no usable GPU": the true cause first, CUDA's words in it,
// the program named as run; one hint. (device.h picks the kind from CUDA.)
static void test_no_gpu_messages(void)
{
    char line[512], hint[256];
    const char *insufficient = "CUDA driver version is insufficient for CUDA runtime version";
    Options o;
    parse_prog("build/x/lesson04", "", &o, &runtime_info);
    CHECK(strcmp(g_prog, "lesson04") == 0, "program name: the basename of argv[0]");
    no_gpu_text(line, sizeof line, hint, sizeof hint, g_prog, NO_GPU_OLD_DRIVER, 0, 13000, NULL, "cudaGetDeviceCount",
                insufficient);
    CHECK(strncmp(line, "lesson04: no usable GPU: no NVIDIA driver was found (", 53) == 0 && strstr(line, insufficient) &&
              strstr(hint, "install the NVIDIA driver") && !strchr(line, '\n') && !strchr(hint, '\n'),
          "no GPU: no driver is the first thing said, CUDA's words after it");
    no_gpu_text(line, sizeof line, hint, sizeof hint, "lesson04", NO_GPU_OLD_DRIVER, 12020, 13000, "0",
                "cudaGetDeviceCount", insufficient);
    CHECK(strstr(line, "no usable GPU: the NVIDIA driver (CUDA 12.2) is older than the CUDA 13.0") == line + 10 &&
              strstr(hint, "update the driver"),
          "no GPU: an old driver says both versions");
    no_gpu_text(line, sizeof line, hint, sizeof hint, "lesson04", NO_GPU_NO_DEVICE, 12080, 12080, "", "cudaGetDeviceCount",
                "no CUDA-capable device is detected");
    CHECK(strstr(line, "no GPU is visible with CUDA_VISIBLE_DEVICES=\"\"") && strstr(hint, "unset it"),
          "no GPU: an empty CUDA_VISIBLE_DEVICES is named as the cause");
    no_gpu_text(line, sizeof line, hint, sizeof hint, "lesson04", NO_GPU_NO_DEVICE, 12080, 12080, NULL,
                "cudaGetDeviceCount", "0 devices");
    CHECK(strstr(line, "the NVIDIA driver sees no GPU") && strstr(hint, "nvidia-smi"), "no GPU: none seen by the driver");
    no_gpu_text(line, sizeof line, hint, sizeof hint, "lesson04", NO_GPU_OTHER, 12080, 12080, NULL, "cudaSetDevice(0)",
                "all CUDA-capable devices are busy or unavailable");
    CHECK(strstr(line, "cudaSetDevice(0) says \"all CUDA-capable devices are busy") && strstr(hint, "nvidia-smi"),
          "no GPU: any other error in CUDA's words");
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0); // each line out at once, should a test be stopped
    test_parser_bounded();
    test_parse_count();
    test_parse_options();
    test_leading_zeros_and_seeds();
    test_messages();
    test_run_cap();
    test_flush_option();
    test_exercise_defaults();
    test_usage();
    test_tolerance();
    test_input();
    test_check_and_median();
    test_report();
    test_no_gpu_messages();
    return g_bad ? 1 : 0;
}
