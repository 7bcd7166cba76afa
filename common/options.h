// options.h -- the command line every binary takes: option lists, shapes, usage (host, C11).
//
// Parsing checks every value before the GPU is touched: bad input is one line
// on stderr and exit code 2, and no input can make the parser loop or crash.
// harness.h includes this file; a lesson includes only harness.h.
#ifndef HARNESS_OPTIONS_H
#define HARNESS_OPTIONS_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counts.h"

#define DEFAULT_N ((size_t)1 << 26)
// A lesson whose default n should be other than 2^26 defines LESSON_DEFAULT_N
// before it includes harness.h.
#ifndef LESSON_DEFAULT_N
#define LESSON_DEFAULT_N DEFAULT_N
#endif
#define DEFAULT_SEED 20070101ULL
#define MAX_REPS 100
#define MIN_REPS 3
#define ADAPTIVE_SECONDS 1.0
#define MAX_OFFSET 4096
// NaN guard floats on each side of the input: a kernel that reads outside
// [d_in, d_in + n) picks one up and its sum turns into NaN, which fails.
#define GUARD_FLOATS 64
#define MAX_LIST 64   // most items in one option's comma-separated list
#define MAX_RUNS 4096 // most combinations of the lists in one command
#define MAX_SHAPE_COUNT ((uint64_t)1 << 40)

enum { DIST_INTS = 0, DIST_UNIFORM = 1 };
enum { FLUSH_DIRTY = 0, FLUSH_CLEAN = 1 }; // how L2 is emptied between timed repetitions

// How a lesson takes the -b option.
enum {
    BLOCK_NONE = 0,    // one thread, no block size to choose (lesson 01)
    BLOCK_RUNTIME = 1, // any power of two in [32, 1024], chosen at run time
    BLOCK_FIXED = 2    // a compile-time constant: -b must equal it
};

typedef struct {
    const char *lesson;      // e.g. "03_interleaved_divergent"
    int block_kind;          // BLOCK_NONE, BLOCK_RUNTIME or BLOCK_FIXED
    int default_block;       // threads per block when -b is not given
    const char *block_name;  // for BLOCK_FIXED: the #define's name, e.g. "BLOCK_SIZE"
} LessonInfo;

typedef struct {
    size_t n;           // -n: elements
    int block;          // -b: threads per block (the lesson's default if not given)
    int reps;           // -r: timed repetitions, 0 = adaptive
    uint64_t seed;      // -s
    int dist;           // -d: DIST_INTS or DIST_UNIFORM
    size_t offset;      // --offset: floats past an aligned start
    int csv;            // --csv: CSV lines only
    int csv_header;     // --csv-header: also print the CSV header first
    int check_only;     // --check: one checked run, no timing
    int flush;          // --flush: FLUSH_DIRTY or FLUSH_CLEAN
    int have_n;         // -n was given, or an exercise's list of sizes (lessons with several shapes use it)
    int have_shape;     // -m ROWS -k COLS were given (row lessons only)
    size_t rows, cols;  // that shape
    const char *lesson; // copied from LessonInfo
    // -n, -s, -d, --offset and -b take comma-separated lists (-n 31,33 -d
    // ints,uniform). run_lesson() runs the lesson once for every combination,
    // with the scalars above set to it; parsing sets them to the first items.
    int n_count, seed_count, dist_count, offset_count, block_count;
    size_t n_list[MAX_LIST];
    uint64_t seed_list[MAX_LIST];
    int dist_list[MAX_LIST];
    size_t offset_list[MAX_LIST];
    int block_list[MAX_LIST];
} Options;

// -m/-k are taken only by lessons that reduce the rows of a matrix; they call
// run_lesson_shape(), which sets this. Everywhere else -m/-k are bad input.
static int g_takes_shape = 0;
// The program's name as run (basename of argv[0]): every message of the
// harness starts with it, as `lesson04: ...`.
static const char *g_prog = "reduce";
static inline void set_prog_name(const char *argv0)
{
    if (!argv0 || !*argv0) return;
    const char *slash = strrchr(argv0, '/');
    g_prog = slash && slash[1] ? slash + 1 : argv0;
}

// An exercise or solution run without -n checks these sizes, with both inputs:
// empty, tiny, one past a warp, not a power of two, and two larger ones.
static const size_t EXERCISE_SIZES[] = {0, 1, 2, 33, 1000, ((size_t)1 << 20) + 3, (size_t)1 << 24};
#define EXERCISE_SIZE_COUNT ((int)(sizeof EXERCISE_SIZES / sizeof EXERCISE_SIZES[0]))

static inline int is_exercise_program(const char *prog)
{
    return strncmp(prog, "exercise", 8) == 0 || strncmp(prog, "solution", 8) == 0;
}

static inline void harness_usage(FILE *f, const LessonInfo *info)
{
    char n_text[32], b_text[48], n_default[48];
    if (is_exercise_program(g_prog)) snprintf(n_default, sizeof n_default, "default: the list below"); // parse_options_r sets it
    else snprintf(n_default, sizeof n_default, "default %s", count_text(LESSON_DEFAULT_N, n_text, sizeof n_text));
    if (info->block_kind == BLOCK_NONE) snprintf(b_text, sizeof b_text, "not taken: this lesson runs one thread");
    else if (info->block_kind == BLOCK_FIXED) snprintf(b_text, sizeof b_text, "%d, fixed at compile time", info->default_block);
    else snprintf(b_text, sizeof b_text, "power of two, 32..1024; default %d", info->default_block);
    fprintf(f,
            "usage: %s [options]   (%s)\n"
            "  -n N             elements (e.g. 1048576, 1e6, 2^20, 2^20+3); %s; 0 allowed\n"
            "  -b B             threads per block (%s)\n"
            "  -r R             timed repetitions (default: adaptive, %d..%d, about %.0f s of timing)\n"
            "  -s SEED          input seed, decimal (default %llu)\n"
            "  -d ints|uniform  input: odd integers in [-15,15] (exact sum) or uniform in [-1,1)\n"
            "  --offset K       start the input K elements past an aligned address (0..%d)\n"
            "  --csv            the timings as CSV lines, not a table; --csv-header adds the header line\n"
            "  --check          one checked run, no timing\n"
            "  --flush dirty|clean  between timed repetitions, empty L2 by writing a buffer of twice\n"
            "                   its size (dirty, the default) or by reading one that nothing writes (clean)\n"
            "%s"
            "  -n, -s, -d, --offset and -b take comma-separated lists (-n 31,2^20+3 -d ints,uniform):\n"
            "                   the program runs once for every combination (at most %d)\n"
            "  An exercise or solution run without -n checks n = 0,1,2,33,1000,2^20+3,2^24\n"
            "                   with both inputs (-d ints,uniform unless -d is given)\n"
            "  -h               this help\n",
            g_prog, info->lesson, n_default,
            b_text,
            MIN_REPS, MAX_REPS, ADAPTIVE_SECONDS, (unsigned long long)DEFAULT_SEED, MAX_OFFSET,
            !g_takes_shape ? ""
            : is_exercise_program(g_prog) ? "  -m ROWS -k COLS  one rows x cols matrix (default: each n of the list below\n"
                                            "                   in rows of a few widths, as -n N alone does)\n"
                                          : "  -m ROWS -k COLS  one rows x cols matrix (default: the lesson's listed shapes;\n"
                                            "                   -n N alone: N elements in rows of a few widths)\n",
            MAX_RUNS);
}

// One item of -n, -b, -s, -d or --offset (c names the option), appended to
// its list in *opt. Returns 0, or 2 with the reason in err.
static inline int parse_option_item(int c, const char *name, const char *item, const char *value, Options *opt,
                                    const LessonInfo *info, char *err, size_t errlen)
{
    uint64_t v = 0;
    char shown[48];
    int rc = c == 'd' || c == 's' ? 0 : parse_count(item, &v);
    // "1,000" is the list 1 and 000: say so rather than run n = 0 (or seed 0)
    if (rc == -3 || (c == 's' && strchr(value, ',') && item[0] == '0' && item[1] != '\0')) {
        if (strchr(value, ','))
            snprintf(err, errlen, "a list item has a leading zero (commas separate items: write 1000 or 1e3, not 1,000): %s %s",
                     name, cut_text(value, shown));
        else
            snprintf(err, errlen, "a number with a leading zero (write it without one): %s %s", name, cut_text(value, shown));
        return 2;
    }
    cut_text(item, shown);
    switch (c) {
    case 'n':
        if (rc == -2 || (rc == 0 && v > (uint64_t)(SIZE_MAX / sizeof(float) - 2 * GUARD_FLOATS - MAX_OFFSET))) {
            snprintf(err, errlen, "too many elements: -n %s", shown);
        } else if (rc) {
            snprintf(err, errlen, "not a count of elements (e.g. 1048576, 1e6, 2^20, 2^20+3): -n %s", shown);
        } else {
            opt->n_list[opt->n_count++] = (size_t)v;
            opt->have_n = 1;
            return 0;
        }
        return 2;
    case 'b':
        if (info->block_kind == BLOCK_NONE)
            snprintf(err, errlen, "this lesson runs one thread; it takes no block size: -b %s", shown);
        else if (info->block_kind == BLOCK_FIXED && (rc || v != (uint64_t)info->default_block))
            snprintf(err, errlen, "the block size is the compile-time constant %s = %d (edit it and rebuild): -b %s",
                     info->block_name ? info->block_name : "BLOCK_SIZE", info->default_block, shown);
        else if (rc || v < 32 || v > 1024 || (v & (v - 1)) != 0)
            snprintf(err, errlen, "threads per block must be a power of two in 32..1024: -b %s", shown);
        else {
            opt->block_list[opt->block_count++] = (int)v;
            return 0;
        }
        return 2;
    case 's': { // decimal only: 010 is ten, never octal or hex
        const char *digits = item;
        while (digits[0] == '0' && digits[1] != '\0') digits++;
        if (parse_uint_span(digits, digits + strlen(digits), &v)) {
            snprintf(err, errlen, "the seed must be a decimal integer in 0..2^64-1: -s %s", shown);
            return 2;
        }
        opt->seed_list[opt->seed_count++] = v;
        return 0;
    }
    case 'd':
        if (strcmp(item, "ints") != 0 && strcmp(item, "uniform") != 0) {
            snprintf(err, errlen, "the distribution must be ints or uniform: -d %s", shown);
            return 2;
        }
        opt->dist_list[opt->dist_count++] = strcmp(item, "ints") == 0 ? DIST_INTS : DIST_UNIFORM;
        return 0;
    default: // 'o'
        if (rc || v > MAX_OFFSET) {
            snprintf(err, errlen, "the offset must be a number of floats in 0..%d: %s %s", MAX_OFFSET, name, shown);
            return 2;
        }
        opt->offset_list[opt->offset_count++] = (size_t)v;
        return 0;
    }
}

// A comma-separated value of -n, -b, -s, -d or --offset: replaces that list.
static inline int parse_option_list(int c, const char *name, const char *value, Options *opt, const LessonInfo *info,
                                    char *err, size_t errlen)
{
    int *count = c == 'n' ? &opt->n_count : c == 'b' ? &opt->block_count : c == 's' ? &opt->seed_count
                 : c == 'd' ? &opt->dist_count : &opt->offset_count;
    char shown[48];
    *count = 0;
    for (const char *p = value;; p++) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[64];
        if (len == 0 || len >= sizeof item) {
            snprintf(err, errlen, "%s: %s %s", len ? "an item of the list is too long" : "an empty item in the list",
                     name, cut_text(value, shown));
            return 2;
        }
        if (*count == MAX_LIST) {
            snprintf(err, errlen, "more than %d items in one list: %s %s", MAX_LIST, name, cut_text(value, shown));
            return 2;
        }
        memcpy(item, p, len);
        item[len] = '\0';
        if (parse_option_item(c, name, item, value, opt, info, err, errlen)) return 2;
        if (!comma) return 0;
        p = comma;
    }
}

// The message for an option getopt refused (c is '?' or ':'): unknown,
// ambiguous, given a value it does not take, or missing its value. A long
// option's trouble leaves optind past it; a short option's is named by optopt.
static inline void option_problem(int c, int argc, char **argv, const struct option *longopts, char *err,
                                  size_t errlen)
{
    char shown[48];
    const char *arg = optind >= 1 && optind - 1 < argc ? argv[optind - 1] : "";
    if (strncmp(arg, "--", 2) == 0 && arg[2]) {
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
        int matches = 0, found = -1;
        for (int i = 0; longopts[i].name; i++)
            if (strncmp(longopts[i].name, arg + 2, len) == 0) {
                if (found < 0 || strlen(longopts[i].name) == len) found = i;
                matches += strlen(longopts[i].name) == len ? 100 : 1; // an exact name wins
            }
        cut_text(arg, shown);
        if (optopt == 0) { // getopt found no option of that name, or more than one
            snprintf(err, errlen, "%s option (-h lists the options): %s",
                     len > 0 && matches > 1 && matches < 100 ? "ambiguous" : "unknown", shown);
            return;
        }
        if (found >= 0 && longopts[found].val == optopt && (c == ':') == (eq == NULL)) {
            if (c == ':') snprintf(err, errlen, "a value is needed: --%s", longopts[found].name);
            else snprintf(err, errlen, "--%s takes no value: %s", longopts[found].name, shown);
            return;
        }
    }
    if (c == ':') snprintf(err, errlen, "a value is needed: -%c", optopt);
    else if (optopt > 32 && optopt < 127) snprintf(err, errlen, "unknown option -%c (-h lists the options)", optopt);
    else snprintf(err, errlen, "unknown option (-h lists the options): %s", cut_text(arg, shown));
}

// Parses argv into *opt. Returns 0 when the run should go on, 1 when -h was
// given (usage printed), 2 on bad input with the reason in err.
static inline int parse_options_r(int argc, char **argv, Options *opt, const LessonInfo *info, char *err,
                                  size_t errlen)
{
    static const struct option longopts[] = {
        {"offset", required_argument, 0, 'o'}, {"csv", no_argument, 0, 'c'},
        {"csv-header", no_argument, 0, 'H'},   {"check", no_argument, 0, 'K'},
        {"flush", required_argument, 0, 'F'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    char shown[48];
    memset(opt, 0, sizeof *opt);
    opt->n_list[0] = LESSON_DEFAULT_N;
    opt->block_list[0] = info->default_block;
    opt->seed_list[0] = DEFAULT_SEED;
    opt->dist_list[0] = DIST_INTS;
    opt->offset_list[0] = 0;
    opt->n_count = opt->seed_count = opt->dist_count = opt->offset_count = opt->block_count = 1;
    opt->lesson = info->lesson;
    if (argc > 0) set_prog_name(argv[0]);
    err[0] = '\0';
    optind = 0; // glibc: 0 starts a fresh scan (the unit tests parse many times)
    opterr = 0; // we print our own one-line messages
    int c, got_m = 0, got_k = 0, got_d = 0;
    while ((c = getopt_long(argc, argv, ":n:b:r:s:d:m:k:h", longopts, NULL)) != -1) {
        uint64_t v = 0;
        int rc;
        switch (c) {
        case 'n':
        case 'b':
        case 's':
        case 'd':
        case 'o': {
            char name[3] = {'-', (char)c, '\0'};
            got_d |= c == 'd';
            if (parse_option_list(c, c == 'o' ? "--offset" : name, optarg, opt, info, err, errlen)) return 2;
            break;
        }
        case 'm':
        case 'k':
            cut_text(optarg, shown);
            if (!g_takes_shape) {
                snprintf(err, errlen, "this lesson takes no matrix shape (-h lists the options): -%c %s", c, shown);
                return 2;
            }
            rc = parse_count(optarg, &v);
            if (rc || v > MAX_SHAPE_COUNT) {
                if (rc == -3) snprintf(err, errlen, "%s: -%c %s", count_problem(rc), c, shown);
                else snprintf(err, errlen, "not a count of %s in 0..2^40 (e.g. 4096, 2^20): -%c %s",
                              c == 'm' ? "rows" : "columns", c, shown);
                return 2;
            }
            if (c == 'm') { opt->rows = (size_t)v; got_m = 1; }
            else { opt->cols = (size_t)v; got_k = 1; }
            break;
        case 'r':
            rc = parse_count(optarg, &v);
            if (rc || v < 1 || v > 100000) {
                snprintf(err, errlen, "repetitions must be a number in 1..100000: -r %s", cut_text(optarg, shown));
                return 2;
            }
            opt->reps = (int)v;
            break;
        case 'F':
            if (strcmp(optarg, "dirty") != 0 && strcmp(optarg, "clean") != 0) {
                snprintf(err, errlen, "the flush must be dirty or clean: --flush %s", cut_text(optarg, shown));
                return 2;
            }
            opt->flush = strcmp(optarg, "clean") == 0 ? FLUSH_CLEAN : FLUSH_DIRTY;
            break;
        case 'c': opt->csv = 1; break;
        case 'H': opt->csv = 1; opt->csv_header = 1; break;
        case 'K': opt->check_only = 1; break;
        case 'h': return 1;
        default: // '?' or ':'
            option_problem(c, argc, argv, longopts, err, errlen);
            return 2;
        }
    }
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument (-h lists the options): %s", cut_text(argv[optind], shown));
        return 2;
    }
    if (got_m != got_k) {
        snprintf(err, errlen, "-m ROWS and -k COLS go together");
        return 2;
    }
    if (got_m && opt->have_n) {
        snprintf(err, errlen, "give -n N or -m ROWS -k COLS, not both (-h lists the options)");
        return 2;
    }
    if (got_m && opt->rows && opt->cols > (SIZE_MAX / sizeof(float) - ((size_t)1 << 20)) / opt->rows) {
        snprintf(err, errlen, "too large a matrix: -m %zu -k %zu", opt->rows, opt->cols);
        return 2;
    }
    opt->have_shape = got_m;
    if (is_exercise_program(g_prog) && !opt->have_n && !got_m) { // the short list that catches usual mistakes
        for (int i = 0; i < EXERCISE_SIZE_COUNT; i++) opt->n_list[i] = EXERCISE_SIZES[i];
        opt->n_count = EXERCISE_SIZE_COUNT;
        opt->have_n = 1;
        if (!got_d) {
            opt->dist_list[0] = DIST_INTS;
            opt->dist_list[1] = DIST_UNIFORM;
            opt->dist_count = 2;
        }
    }
    uint64_t runs = (uint64_t)opt->n_count * (uint64_t)opt->seed_count * (uint64_t)opt->dist_count *
                    (uint64_t)opt->offset_count * (uint64_t)opt->block_count;
    if (runs > MAX_RUNS) {
        snprintf(err, errlen, "too many runs: the lists make %llu combinations (at most %d); split the command",
                 (unsigned long long)runs, MAX_RUNS);
        return 2;
    }
    opt->n = opt->n_list[0];
    opt->block = opt->block_list[0];
    opt->seed = opt->seed_list[0];
    opt->dist = opt->dist_list[0];
    opt->offset = opt->offset_list[0];
    return 0;
}

// The same, for run_lesson(): prints usage or the one-line error and
// exits. takes_shape: whether -m ROWS -k COLS are this lesson's options.
static inline void parse_options_or_exit(int argc, char **argv, Options *opt, const LessonInfo *info, int takes_shape)
{
    char err[512];
    g_takes_shape = takes_shape;
    int rc = parse_options_r(argc, argv, opt, info, err, sizeof err);
    if (rc == 1) {
        harness_usage(stdout, info);
        exit(0);
    }
    if (rc == 2) {
        fprintf(stderr, "%s: %s\n", g_prog, err);
        exit(2);
    }
}

#endif // HARNESS_OPTIONS_H
