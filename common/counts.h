// counts.h -- numbers typed on the command line: counts like 1e6 or 2^20+3, decimal integers (host, C11).
//
// Every parser here ends in bounded time on any text and reports why it
// refused: not a number, too large, or a leading zero. options.h uses them.
#ifndef HARNESS_COUNTS_H
#define HARNESS_COUNTS_H

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// v as text: "2^k" for a power of two from 2^10 on, else decimal.
static inline const char *count_text(uint64_t v, char *buf, size_t len)
{
    int k = 0;
    while (k < 63 && ((uint64_t)1 << k) < v) k++;
    if (v >= 1024 && v == (uint64_t)1 << k) snprintf(buf, len, "2^%d", k);
    else snprintf(buf, len, "%llu", (unsigned long long)v);
    return buf;
}

// Copies s into buf, cut to 40 characters with "..." (echoed values stay short).
static inline const char *cut_text(const char *s, char buf[48])
{
    size_t len = strlen(s);
    if (len <= 40) memcpy(buf, s, len + 1);
    else { memcpy(buf, s, 40); memcpy(buf + 40, "...", 4); }
    return buf;
}

// An unsigned decimal integer filling all of [s, end): 0, -1 if not digits,
// -2 if too large, -3 if it has a leading zero ("007", "000").
static inline int parse_uint_span(const char *s, const char *end, uint64_t *out)
{
    uint64_t v = 0;
    int big = 0;
    if (s == end) return -1;
    for (const char *p = s; p < end; p++) {
        if (*p < '0' || *p > '9') return -1;
        if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10) big = 1;
        else v = v * 10 + (uint64_t)(*p - '0');
    }
    if (end - s > 1 && *s == '0') return -3;
    if (big) return -2;
    *out = v;
    return 0;
}

// A count: 1048576, 1e6, 1.5e6 (must be whole), 2^20, each optionally
// followed by +K or -K (2^20+3, 2^31-1). No sign, no spaces, no junk, no
// leading zeros. Returns 0 on success, -1 if the text is not such a count,
// -2 if too large, -3 for a leading zero (as in "1,000" read as a list).
static inline int parse_count(const char *s, uint64_t *out)
{
    if (s == NULL || *s < '0' || *s > '9') return -1;
    const char *end = s + strlen(s);
    // split off a trailing +K / -K (the first '+' or '-' not right after an 'e')
    const char *adj = NULL;
    for (const char *p = s + 1; p < end; p++)
        if ((*p == '+' || *p == '-') && p[-1] != 'e' && p[-1] != 'E') { adj = p; break; }
    const char *term_end = adj ? adj : end;
    uint64_t term = 0;
    const char *caret = (const char *)memchr(s, '^', (size_t)(term_end - s));
    const char *e = NULL;
    for (const char *p = s; p < term_end; p++)
        if (*p == 'e' || *p == 'E' || *p == '.') { e = p; break; }
    if (caret) {
        uint64_t base = 0, exp = 0;
        int rb = parse_uint_span(s, caret, &base), re = parse_uint_span(caret + 1, term_end, &exp);
        if (rb == -1 || re == -1) return -1;
        if (rb == -3 || re == -3) return -3;
        if (rb == -2) return -2;
        if (re == -2) { // an exponent beyond 2^64: only 0 and 1 survive it
            if (base > 1) return -2;
            exp = 1;
        }
        term = 1;
        if (base == 0) term = exp ? 0 : 1;
        else if (base > 1) // at most 64 doublings before anything overflows
            for (uint64_t i = 0; i < exp; i++) {
                if (term > UINT64_MAX / base) return -2;
                term *= base;
            }
    } else if (e) {
        char buf[64];
        size_t len = (size_t)(term_end - s);
        if (len >= sizeof buf) return -1;
        memcpy(buf, s, len);
        buf[len] = '\0';
        for (size_t i = 0; i < len; i++) // digits, one '.', one exponent: nothing else
            if (!((buf[i] >= '0' && buf[i] <= '9') || buf[i] == '.' || buf[i] == 'e' || buf[i] == 'E' ||
                  ((buf[i] == '+' || buf[i] == '-') && i > 0 && (buf[i - 1] == 'e' || buf[i - 1] == 'E'))))
                return -1;
        if (buf[0] == '0' && buf[1] >= '0' && buf[1] <= '9') return -3;
        char *stop = NULL;
        errno = 0;
        double d = strtod(buf, &stop);
        if (stop != buf + len || errno == ERANGE) return errno == ERANGE ? -2 : -1;
        if (d >= 1.8e19) return -2;
        if (d != floor(d)) return -1; // 1.5e0 is not a count
        term = (uint64_t)d;
    } else {
        int rc = parse_uint_span(s, term_end, &term);
        if (rc) return rc;
    }
    if (adj) {
        uint64_t k = 0;
        int rc = parse_uint_span(adj + 1, end, &k);
        if (rc) return rc == -2 ? (*adj == '+' ? -2 : -1) : rc;
        if (*adj == '+') {
            if (term > UINT64_MAX - k) return -2;
            term += k;
        } else {
            if (k > term) return -1; // would be negative
            term -= k;
        }
    }
    *out = term;
    return 0;
}

// The reason a count was refused, for a message.
static inline const char *count_problem(int rc)
{
    return rc == -2   ? "too large"
           : rc == -3 ? "a number with a leading zero (write 1000 or 1e3, not 1,000)"
                      : "not a count";
}

#endif // HARNESS_COUNTS_H
