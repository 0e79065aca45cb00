#include "flags.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static const struct {
    const char *suffix;
    int64_t ms;
} duration_units[] = {
    /* "ms" before "m": the longest suffix that matches wins. */
    {"ms", FLAGS_MILLISECOND},
    {"h", FLAGS_HOUR},
    {"m", FLAGS_MINUTE},
    {"s", FLAGS_SECOND},
};

#define DURATION_EXAMPLES "like 500ms, 30s, 10m, 1h or 1m30s"

/* Reads the digits at *p into *v; returns the count of digits, *overflow set if *v would not fit. */
static size_t read_digits(const char **p, int64_t *v, int *overflow)
{
    size_t n = 0;
    *v = 0;
    for (; **p >= '0' && **p <= '9'; (*p)++, n++) {
        int d = **p - '0';
        if (*v > (INT64_MAX - d) / 10)
            *overflow = 1;
        else
            *v = *v * 10 + d;
    }
    return n;
}

static int range_error(const char *s, int64_t min, int64_t max, int duration, struct error *err)
{
    char lo[FLAGS_DURATION_MAX], hi[FLAGS_DURATION_MAX];
    if (duration) {
        flags_format_duration(min, lo, sizeof(lo));
        flags_format_duration(max, hi, sizeof(hi));
    } else {
        snprintf(lo, sizeof(lo), "%" PRId64, min);
        snprintf(hi, sizeof(hi), "%" PRId64, max);
    }
    error_setf(err, "%s is out of range (%s..%s)", s, lo, hi);
    return -1;
}

int flags_parse_duration(const char *s, int64_t min_ms, int64_t max_ms, int64_t *ms, struct error *err)
{
    const char *p = s;
    int64_t total = 0;
    int overflow = 0;
    if (strcmp(s, "0") != 0) {
        do {
            int64_t v;
            size_t digits = read_digits(&p, &v, &overflow), u = 0, nunits = sizeof(duration_units) / sizeof(duration_units[0]);
            while (digits > 0 && u < nunits && strncmp(p, duration_units[u].suffix, strlen(duration_units[u].suffix)) != 0)
                u++;
            if (digits > 0 && u == nunits && p - s == (ptrdiff_t)digits && *p == '\0') {
                error_setf(err, "\"%s\" has no unit (write %ss for seconds, %sms for milliseconds)", s, s, s);
                return -1;
            }
            if (digits == 0 || u == nunits) {
                error_setf(err, "\"%s\" is not a duration (write it %s)", s, DURATION_EXAMPLES);
                return -1;
            }
            p += strlen(duration_units[u].suffix);
            int64_t unit = duration_units[u].ms;
            if (v > INT64_MAX / unit || total > INT64_MAX - v * unit)
                overflow = 1;
            else
                total += v * unit;
        } while (*p != '\0');
    }
    if (overflow || total < min_ms || total > max_ms)
        return range_error(s, min_ms, max_ms, 1, err);
    *ms = total;
    return 0;
}

int flags_parse_int(const char *s, int64_t min, int64_t max, int64_t *out, struct error *err)
{
    const char *p = s;
    int negative = *p == '-', overflow = 0;
    if (negative || *p == '+')
        p++;
    int64_t v;
    if (read_digits(&p, &v, &overflow) == 0 || *p != '\0') {
        error_setf(err, "\"%s\" is not an integer", s);
        return -1;
    }
    if (negative)
        v = -v; /* read_digits stops below INT64_MAX, so this cannot overflow */
    if (overflow || v < min || v > max)
        return range_error(s, min, max, 0, err);
    *out = v;
    return 0;
}

void flags_format_duration(int64_t ms, char *buf, size_t size)
{
    static const struct {
        const char *suffix;
        int64_t ms;
    } parts[] = {{"h", FLAGS_HOUR}, {"m", FLAGS_MINUTE}, {"s", FLAGS_SECOND}, {"ms", FLAGS_MILLISECOND}};
    size_t len = 0;
    if (size == 0)
        return;
    buf[0] = '\0';
    if (ms <= 0) {
        snprintf(buf, size, ms == 0 ? "0s" : "-");
        return;
    }
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]) && len < size; i++) {
        int64_t n = ms / parts[i].ms;
        ms %= parts[i].ms;
        if (n > 0) {
            int w = snprintf(buf + len, size - len, "%" PRId64 "%s", n, parts[i].suffix);
            len += w > 0 ? (size_t)w : 0;
        }
    }
}

static int parse_bool(const char *s, int *out)
{
    if (s == NULL || strcmp(s, "true") == 0)
        *out = 1;
    else if (strcmp(s, "false") == 0)
        *out = 0;
    else
        return -1;
    return 0;
}

/* Stores one value; source ("--resync", "RAYGATE_X") prefixes the message on failure. */
static int set_value(const struct flag *f, const char *source, const char *v, struct error *err)
{
    struct error why = {{0}};
    int64_t n;
    switch (f->kind) {
    case FLAG_KIND_BOOL:
        if (parse_bool(v, f->b) != 0)
            error_setf(&why, "\"%s\" is not true or false", v);
        break;
    case FLAG_KIND_STRING:
        *f->s = v;
        break;
    case FLAG_KIND_LIST:
        if (*f->count >= (size_t)f->max)
            error_setf(&why, "given more than %" PRId64 " times", f->max);
        else
            f->list[(*f->count)++] = v;
        break;
    case FLAG_KIND_INT:
    case FLAG_KIND_DURATION:
        if ((f->kind == FLAG_KIND_INT ? flags_parse_int(v, f->min, f->max, &n, &why)
                                      : flags_parse_duration(v, f->min, f->max, &n, &why)) == 0)
            *f->i = n;
        break;
    case FLAG_KIND_CHOICE: {
        size_t k = 0;
        while (f->choices[k] != NULL && strcmp(f->choices[k], v) != 0)
            k++;
        if (f->choices[k] != NULL) {
            *f->choice = (int)k;
            break;
        }
        char names[160] = "";
        for (k = 0; f->choices[k] != NULL; k++)
            util_format(names + strlen(names), sizeof(names) - strlen(names), "%s%s", k > 0 ? ", " : "", f->choices[k]);
        error_setf(&why, "\"%s\" is not one of %s", v, names);
        break;
    }
    }
    if (why.message[0] == '\0')
        return 0;
    error_setf(err, "%s: %s", source, why.message);
    return -1;
}

static const char *env_lookup(char **envp, const char *name)
{
    size_t n = strlen(name);
    for (; envp != NULL && *envp != NULL; envp++)
        if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
            return *envp + n + 1;
    return NULL;
}

static int apply_env(const struct flag *flags, size_t nflags, char **envp, struct error *err)
{
    for (size_t i = 0; i < nflags; i++) {
        const char *v = flags[i].env != NULL ? env_lookup(envp, flags[i].env) : NULL;
        /* An empty variable is unset, as a Deployment's `value: ""` means. */
        if (v != NULL && v[0] != '\0' && set_value(&flags[i], flags[i].env, v, err) != 0)
            return -1;
    }
    return 0;
}

/* --help / --version win wherever they are (before "--"), and then nothing else is read. */
static enum flags_result find_help(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return FLAGS_HELP;
        if (strcmp(argv[i], "--version") == 0)
            return FLAGS_VERSION;
    }
    return FLAGS_OK;
}

/* getopt_long takes "--res" for "--resync"; we take only the whole name. */
static int whole_name(const char *given, const char *name)
{
    size_t n = strlen(name);
    return strncmp(given, "--", 2) == 0 && strncmp(given + 2, name, n) == 0 && (given[2 + n] == '\0' || given[2 + n] == '=');
}

static int parse_argv(const struct flag *flags, size_t nflags, const struct option *options, int argc, char **argv,
                      struct error *err)
{
    char name[128];
    optind = 0; /* GNU: start over, also after an earlier parse */
    opterr = 0;
    for (;;) {
        int at = optind == 0 ? 1 : optind, index = -1;
        /* "+": stop at the first non-flag (a positional argument is refused below); ":": report a missing value. */
        int c = getopt_long(argc, argv, "+:", options, &index);
        if (c == -1)
            break;
        const char *given = at < argc ? argv[at] : "";
        util_format(name, sizeof(name), "%.*s", (int)strcspn(given, "="), given);
        if (c == ':') {
            error_setf(err, "%s needs a value (see --help)", name);
            return -1;
        }
        if (c == '?' || index < 0 || !whole_name(given, flags[index].name)) {
            error_setf(err, "unknown flag %s (see --help)", name);
            return -1;
        }
        if (set_value(&flags[index], name, optarg, err) != 0)
            return -1;
    }
    if (optind < argc) {
        error_setf(err, "unexpected argument \"%s\" (see --help)", argv[optind]);
        return -1;
    }
    return 0;
}

enum flags_result flags_parse(const struct flag *flags, size_t nflags, int argc, char **argv, char **envp, struct error *err)
{
    enum flags_result r = find_help(argc, argv);
    if (r != FLAGS_OK)
        return r;
    struct option *options = util_calloc(nflags + 1, sizeof(*options));
    for (size_t i = 0; i < nflags; i++) {
        options[i].name = flags[i].name;
        options[i].has_arg = flags[i].kind == FLAG_KIND_BOOL ? optional_argument : required_argument;
        options[i].val = 0;
    }
    int rc = apply_env(flags, nflags, envp, err) == 0 && parse_argv(flags, nflags, options, argc, argv, err) == 0;
    free(options);
    return rc ? FLAGS_OK : FLAGS_ERROR;
}

/* "default 30s; 1s..24h; env X" for a flag, from the current value of its variable. */
static void describe(const struct flag *f, char *buf, size_t size)
{
    char def[64] = "", bounds[2 * FLAGS_DURATION_MAX + 8] = "", lo[FLAGS_DURATION_MAX], hi[FLAGS_DURATION_MAX];
    switch (f->kind) {
    case FLAG_KIND_BOOL:
        if (*f->b) /* a switch on by default says how to turn it off */
            util_format(def, sizeof(def), "on by default; --%s=false turns it off", f->name);
        break;
    case FLAG_KIND_STRING:
        if (*f->s != NULL)
            util_format(def, sizeof(def), "default %s", *f->s);
        break;
    case FLAG_KIND_LIST:
        util_format(def, sizeof(def), "repeatable, at most %" PRId64 " times", f->max);
        break;
    case FLAG_KIND_INT:
    case FLAG_KIND_DURATION: {
        char val[FLAGS_DURATION_MAX];
        if (f->kind == FLAG_KIND_DURATION) {
            flags_format_duration(*f->i, val, sizeof(val));
            flags_format_duration(f->min, lo, sizeof(lo));
            flags_format_duration(f->max, hi, sizeof(hi));
        } else {
            snprintf(val, sizeof(val), "%" PRId64, *f->i);
            snprintf(lo, sizeof(lo), "%" PRId64, f->min);
            snprintf(hi, sizeof(hi), "%" PRId64, f->max);
        }
        /* A default outside the bounds means "unset": not shown. */
        if (*f->i >= f->min && *f->i <= f->max)
            util_format(def, sizeof(def), "default %s", val);
        util_format(bounds, sizeof(bounds), "%s..%s", lo, hi);
        break;
    }
    case FLAG_KIND_CHOICE:
        util_format(def, sizeof(def), "default %s", f->choices[*f->choice]);
        break;
    }
    util_format(buf, size, "%s%s%s%s%s%s", def, def[0] && bounds[0] ? "; " : "", bounds,
                (def[0] || bounds[0]) && f->env ? "; " : "", f->env ? "env " : "", f->env ? f->env : "");
}

void flags_usage(const struct flags_program *p, FILE *out)
{
    char head[96], extra[256];
    int width = (int)strlen("--help, --version");
    for (size_t i = 0; i < p->nflags; i++) {
        const struct flag *f = &p->flags[i];
        int w = (int)(strlen(f->name) + 2 + (f->arg ? strlen(f->arg) + 1 : 0));
        width = w > width ? w : width;
    }
    fprintf(out, "usage: %s\n", p->synopsis);
    for (size_t i = 0; i < p->nflags; i++) {
        const struct flag *f = &p->flags[i];
        util_format(head, sizeof(head), "--%s%s%s", f->name, f->arg ? " " : "", f->arg ? f->arg : "");
        describe(f, extra, sizeof(extra));
        fprintf(out, "  %-*s  %s%s%s%s\n", width, head, f->help, extra[0] ? " (" : "", extra, extra[0] ? ")" : "");
    }
    fprintf(out, "  %-*s  %s\n", width, "--help, --version", "this text; the version");
    if (p->epilog != NULL)
        fputs(p->epilog, out);
}

int flags_handle(const struct flags_program *p, const char *version, int argc, char **argv, char **envp)
{
    struct error err = {{0}};
    switch (flags_parse(p->flags, p->nflags, argc, argv, envp, &err)) {
    case FLAGS_OK:
        return -1;
    case FLAGS_HELP:
        flags_usage(p, stdout);
        return 0;
    case FLAGS_VERSION:
        printf("%s %s\n", p->name, version);
        return 0;
    case FLAGS_ERROR:
        break;
    }
    return flags_fail(p, "%s", err.message);
}

int flags_fail(const struct flags_program *p, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s\n", p->name, msg);
    return 2;
}
