/*
 * flags: the one command-line parser of raygate's programs (getopt_long).
 *
 * A program describes its flags in one table, one line a flag, pointing at the
 * variables that hold their defaults:
 *
 *   struct flag table[] = {
 *       FLAG_STRING("kubeconfig", "FILE", &f.kubeconfig, "default $KUBECONFIG, else in-cluster"),
 *       FLAG_DURATION("resync", &f.resync_ms, FLAGS_SECOND, FLAGS_HOUR * 24, "full decision pass period"),
 *   };
 *
 * Every number has a bound, checked without overflow. Durations are written as
 * Kubernetes writes them: "500ms", "30s", "10m", "1h", or combined ("1m30s");
 * "0" is zero; a bare number is refused (it has no unit). Only exact flag
 * names are taken (getopt_long would take a unique prefix: a later flag would
 * change what an abbreviation meant). A flag may also come from an environment
 * variable; the command line wins. A flag given twice keeps the last value.
 *
 * Messages name the flag: "--resync: 99999999999999999h is out of range (1s..24h)".
 * A bad flag is exit status 2.
 */
#ifndef RAYGATE_FLAGS_H
#define RAYGATE_FLAGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"

/* Duration units in milliseconds, for bounds: FLAGS_MINUTE * 10. */
#define FLAGS_MILLISECOND INT64_C(1)
#define FLAGS_SECOND INT64_C(1000)
#define FLAGS_MINUTE (60 * FLAGS_SECOND)
#define FLAGS_HOUR (60 * FLAGS_MINUTE)

enum flag_kind {
    FLAG_KIND_BOOL,     /* --x (or --x=true, --x=false): *b = 1 or 0 */
    FLAG_KIND_STRING,   /* --x V: *s = V (argv's own storage) */
    FLAG_KIND_LIST,     /* --x V, repeatable: list[(*count)++] = V, at most max times */
    FLAG_KIND_INT,      /* --x N: *i = N, min <= N <= max */
    FLAG_KIND_DURATION, /* --x D: *i = D in milliseconds, min <= D <= max */
    FLAG_KIND_CHOICE,   /* --x NAME: *choice = the index of NAME in choices */
};

struct flag {
    const char *name; /* without "--" */
    enum flag_kind kind;
    const char *arg;  /* the value's name in --help ("FILE"), NULL for BOOL */
    const char *env;  /* environment variable read before the command line, or NULL */
    const char *help; /* one line */
    union {
        int *b;
        const char **s;
        int64_t *i;
        int *choice;
        const char **list;
    };
    size_t *count;              /* LIST: how many are in list */
    int64_t min, max;           /* INT, DURATION: bounds (inclusive); LIST: max is the capacity of list */
    const char *const *choices; /* CHOICE: NULL-terminated names */
};

/* One line of a flag table each. dst points at the variable holding the default. */
/* clang-format off */
#define FLAG_BOOL(name_, dst, help_) {.name = (name_), .kind = FLAG_KIND_BOOL, .b = (dst), .help = (help_)}
#define FLAG_STRING(name_, arg_, dst, help_) {.name = (name_), .kind = FLAG_KIND_STRING, .arg = (arg_), .s = (dst), .help = (help_)}
#define FLAG_STRING_ENV(name_, arg_, env_, dst, help_) \
    {.name = (name_), .kind = FLAG_KIND_STRING, .arg = (arg_), .env = (env_), .s = (dst), .help = (help_)}
/* array is an array (not a pointer): its size is the most values the flag takes. */
#define FLAG_LIST(name_, arg_, array, countp, help_) \
    {.name = (name_), .kind = FLAG_KIND_LIST, .arg = (arg_), .list = (array), .count = (countp), \
     .max = (int64_t)(sizeof(array) / sizeof((array)[0])), .help = (help_)}
#define FLAG_INT(name_, arg_, dst, min_, max_, help_) \
    {.name = (name_), .kind = FLAG_KIND_INT, .arg = (arg_), .i = (dst), .min = (min_), .max = (max_), .help = (help_)}
#define FLAG_DURATION(name_, dst, min_, max_, help_) \
    {.name = (name_), .kind = FLAG_KIND_DURATION, .arg = "D", .i = (dst), .min = (min_), .max = (max_), .help = (help_)}
#define FLAG_CHOICE_ENV(name_, arg_, env_, choices_, dst, help_) \
    {.name = (name_), .kind = FLAG_KIND_CHOICE, .arg = (arg_), .env = (env_), .choices = (choices_), .choice = (dst), \
     .help = (help_)}
#define FLAG_CHOICE(name_, arg_, choices_, dst, help_) FLAG_CHOICE_ENV(name_, arg_, NULL, choices_, dst, help_)
/* clang-format on */

/* A program: its name (prefix of every message), version and flag table. */
struct flags_program {
    const char *name;     /* "raygate-gate" */
    const char *synopsis; /* after "usage: ", may span lines */
    const char *epilog;   /* printed after the flags in --help, or NULL */
    const struct flag *flags;
    size_t nflags;
};

enum flags_result {
    FLAGS_ERROR = -1,
    FLAGS_OK = 0,
    FLAGS_HELP = 1,    /* --help or -h anywhere before "--" */
    FLAGS_VERSION = 2, /* --version anywhere before "--" */
};

/*
 * Sets the table's variables from envp ("NAME=value" strings, NULL-terminated;
 * may be NULL) and then argv[1..argc). Returns FLAGS_OK, FLAGS_HELP or
 * FLAGS_VERSION (then nothing else was read), or FLAGS_ERROR with
 * err->message naming the flag (or variable). Positional arguments are
 * refused. Uses getopt_long's global state (optind is reset).
 */
enum flags_result flags_parse(const struct flag *flags, size_t nflags, int argc, char **argv, char **envp, struct error *err);

/*
 * Parses a duration ("1m30s") into milliseconds within [min_ms, max_ms].
 * Returns 0, or -1 with err->message ("\"30\" has no unit ...", "... is out of
 * range (1s..24h)"), without the flag's name.
 */
int flags_parse_duration(const char *s, int64_t min_ms, int64_t max_ms, int64_t *ms, struct error *err);

/* Parses a decimal integer within [min, max]; returns 0, or -1 with err->message. */
int flags_parse_int(const char *s, int64_t min, int64_t max, int64_t *out, struct error *err);

/* Writes ms (>= 0) as a duration flags_parse_duration reads back ("1m30s", "500ms", "0s"). */
void flags_format_duration(int64_t ms, char *buf, size_t size);

/* Longest text flags_format_duration writes, NUL included. */
#define FLAGS_DURATION_MAX 48

/* Writes --help: the synopsis, one line a flag with its default, bounds and variable, the epilog. */
void flags_usage(const struct flags_program *p, FILE *out);

/*
 * The whole command line step of a main(): parses (as flags_parse), prints
 * --help to stdout, "<name> <version>" for --version, or "<name>: <message>"
 * to stderr. Returns -1 to go on, else the exit status: 0 after --help and
 * --version, 2 after a bad flag.
 */
int flags_handle(const struct flags_program *p, const char *version, int argc, char **argv, char **envp);

/* Prints "<name>: <message>" to stderr for a bad combination of flags found after parsing; returns 2. */
int flags_fail(const struct flags_program *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
