#include "metrics.h"
#include "util.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum family_type {
    FAMILY_COUNTER,
    FAMILY_GAUGE,
    FAMILY_HISTOGRAM,
};

struct series {
    char **values;
    uint64_t counter;
    double gauge;
    uint64_t *buckets; /* per bucket, not cumulative; nbounds + 1 (the last is +Inf) */
    double sum;
    uint64_t count;
    struct series *next;
};

struct metrics_family {
    struct metrics_registry *reg;
    enum family_type type;
    char *name;
    char *help;
    size_t nlabels;
    char **labels;
    double *bounds;
    size_t nbounds;
    struct series *series, **series_tail;
    struct metrics_family *next;
};

struct metrics_registry {
    pthread_mutex_t mu;
    struct metrics_family *families, **families_tail;
};

struct metrics_registry *metrics_registry_create(void)
{
    struct metrics_registry *reg = util_calloc(1, sizeof(*reg));
    if (pthread_mutex_init(&reg->mu, NULL) != 0)
        abort();
    reg->families_tail = &reg->families;
    return reg;
}

static void free_strings(char **v, size_t n)
{
    if (v == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void series_free(const struct metrics_family *fam, struct series *s)
{
    free_strings(s->values, fam->nlabels);
    free(s->buckets);
    free(s);
}

static void family_destroy(struct metrics_family *fam)
{
    struct series *s = fam->series;
    while (s != NULL) {
        struct series *next = s->next;
        series_free(fam, s);
        s = next;
    }
    free_strings(fam->labels, fam->nlabels);
    free(fam->bounds);
    free(fam->help);
    free(fam->name);
    free(fam);
}

void metrics_registry_destroy(struct metrics_registry *reg)
{
    if (reg == NULL)
        return;
    struct metrics_family *fam = reg->families;
    while (fam != NULL) {
        struct metrics_family *next = fam->next;
        family_destroy(fam);
        fam = next;
    }
    pthread_mutex_destroy(&reg->mu);
    free(reg);
}

static int is_alpha_(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int valid_metric_name(const char *s)
{
    if (s == NULL || !(is_alpha_(s[0]) || s[0] == ':'))
        return 0;
    for (const char *p = s + 1; *p != '\0'; p++) {
        if (!(is_alpha_(*p) || is_digit(*p) || *p == ':'))
            return 0;
    }
    return 1;
}

static int valid_label_name(const char *s)
{
    if (s == NULL || !is_alpha_(s[0]) || strncmp(s, "__", 2) == 0)
        return 0;
    for (const char *p = s + 1; *p != '\0'; p++) {
        if (!(is_alpha_(*p) || is_digit(*p)))
            return 0;
    }
    return 1;
}

static struct metrics_family *family_create(struct metrics_registry *reg, enum family_type type, const char *name, const char *help,
                                            size_t nlabels, const char *const *label_names, const double *bounds, size_t nbounds)
{
    if (reg == NULL || !valid_metric_name(name) || (nlabels > 0 && label_names == NULL))
        return NULL;
    for (size_t i = 0; i < nlabels; i++) {
        if (!valid_label_name(label_names[i]))
            return NULL;
        if (type == FAMILY_HISTOGRAM && strcmp(label_names[i], "le") == 0)
            return NULL;
        for (size_t j = 0; j < i; j++) {
            if (strcmp(label_names[i], label_names[j]) == 0)
                return NULL;
        }
    }
    if (type == FAMILY_HISTOGRAM) {
        if (nbounds > 0 && bounds == NULL)
            return NULL;
        for (size_t i = 0; i < nbounds; i++) {
            if (!isfinite(bounds[i]) || (i > 0 && !(bounds[i] > bounds[i - 1])))
                return NULL;
        }
    }

    struct metrics_family *fam = NULL;
    pthread_mutex_lock(&reg->mu);
    for (struct metrics_family *f = reg->families; f != NULL; f = f->next) {
        if (strcmp(f->name, name) == 0)
            goto out;
    }
    fam = util_calloc(1, sizeof(*fam));
    fam->reg = reg;
    fam->type = type;
    fam->name = util_strdup(name);
    fam->help = util_strdup(help != NULL ? help : "");
    fam->nlabels = nlabels;
    fam->labels = util_calloc(nlabels, sizeof(char *));
    for (size_t i = 0; i < nlabels; i++)
        fam->labels[i] = util_strdup(label_names[i]);
    if (type == FAMILY_HISTOGRAM) {
        fam->nbounds = nbounds;
        fam->bounds = util_calloc(nbounds, sizeof(double));
        if (nbounds > 0)
            memcpy(fam->bounds, bounds, nbounds * sizeof(double));
    }
    fam->series_tail = &fam->series;
    *reg->families_tail = fam;
    reg->families_tail = &fam->next;
out:
    pthread_mutex_unlock(&reg->mu);
    return fam;
}

struct metrics_family *metrics_counter_create(struct metrics_registry *reg, const char *name, const char *help, size_t nlabels,
                                              const char *const *label_names)
{
    return family_create(reg, FAMILY_COUNTER, name, help, nlabels, label_names, NULL, 0);
}

struct metrics_family *metrics_gauge_create(struct metrics_registry *reg, const char *name, const char *help, size_t nlabels,
                                            const char *const *label_names)
{
    return family_create(reg, FAMILY_GAUGE, name, help, nlabels, label_names, NULL, 0);
}

struct metrics_family *metrics_histogram_create(struct metrics_registry *reg, const char *name, const char *help, size_t nlabels,
                                                const char *const *label_names, const double *bounds, size_t nbounds)
{
    return family_create(reg, FAMILY_HISTOGRAM, name, help, nlabels, label_names, bounds, nbounds);
}

/* Caller holds the registry's mutex. Label values were checked non-NULL. */
static struct series *series_get(struct metrics_family *fam, const char *const *label_values)
{
    for (struct series *s = fam->series; s != NULL; s = s->next) {
        size_t i = 0;
        while (i < fam->nlabels && strcmp(s->values[i], label_values[i]) == 0)
            i++;
        if (i == fam->nlabels)
            return s;
    }
    struct series *s = util_calloc(1, sizeof(*s));
    s->values = util_calloc(fam->nlabels, sizeof(char *));
    for (size_t i = 0; i < fam->nlabels; i++)
        s->values[i] = util_strdup(label_values[i]);
    if (fam->type == FAMILY_HISTOGRAM)
        s->buckets = util_calloc(fam->nbounds + 1, sizeof(uint64_t));
    *fam->series_tail = s;
    fam->series_tail = &s->next;
    return s;
}

static int check_update(const struct metrics_family *fam, enum family_type type, const char *const *label_values)
{
    if (fam == NULL || fam->type != type)
        return -1;
    if (fam->nlabels > 0 && label_values == NULL)
        return -1;
    for (size_t i = 0; i < fam->nlabels; i++) {
        if (label_values[i] == NULL)
            return -1;
    }
    return 0;
}

int metrics_counter_add(struct metrics_family *fam, const char *const *label_values, uint64_t n)
{
    if (check_update(fam, FAMILY_COUNTER, label_values) != 0)
        return -1;
    pthread_mutex_lock(&fam->reg->mu);
    series_get(fam, label_values)->counter += n;
    pthread_mutex_unlock(&fam->reg->mu);
    return 0;
}

int metrics_gauge_set(struct metrics_family *fam, const char *const *label_values, double value)
{
    if (check_update(fam, FAMILY_GAUGE, label_values) != 0)
        return -1;
    pthread_mutex_lock(&fam->reg->mu);
    series_get(fam, label_values)->gauge = value;
    pthread_mutex_unlock(&fam->reg->mu);
    return 0;
}

int metrics_gauge_add(struct metrics_family *fam, const char *const *label_values, double delta)
{
    if (check_update(fam, FAMILY_GAUGE, label_values) != 0)
        return -1;
    pthread_mutex_lock(&fam->reg->mu);
    series_get(fam, label_values)->gauge += delta;
    pthread_mutex_unlock(&fam->reg->mu);
    return 0;
}

int metrics_histogram_observe(struct metrics_family *fam, const char *const *label_values, double value)
{
    if (check_update(fam, FAMILY_HISTOGRAM, label_values) != 0)
        return -1;
    pthread_mutex_lock(&fam->reg->mu);
    struct series *s = series_get(fam, label_values);
    size_t i = 0;
    /* Buckets are "less than or equal"; NaN lands in +Inf only, as in client_golang. */
    while (i < fam->nbounds && !(value <= fam->bounds[i]))
        i++;
    s->buckets[i]++;
    s->sum += value;
    s->count++;
    pthread_mutex_unlock(&fam->reg->mu);
    return 0;
}

int metrics_remove(struct metrics_family *fam, const char *const *label_values)
{
    if (fam == NULL)
        return -1;
    int removed = 0;
    pthread_mutex_lock(&fam->reg->mu);
    struct series **pp = &fam->series;
    while (*pp != NULL) {
        struct series *s = *pp;
        size_t i = 0;
        while (label_values != NULL && i < fam->nlabels && (label_values[i] == NULL || strcmp(s->values[i], label_values[i]) == 0))
            i++;
        if (label_values != NULL && i < fam->nlabels) {
            pp = &s->next;
            continue;
        }
        *pp = s->next;
        series_free(fam, s);
        removed++;
    }
    /* The tail pointer follows the last series left. */
    fam->series_tail = &fam->series;
    while (*fam->series_tail != NULL)
        fam->series_tail = &(*fam->series_tail)->next;
    pthread_mutex_unlock(&fam->reg->mu);
    return removed;
}

/* Escapes backslash and newline (HELP) and also double quotes (label values). */
static void buf_put_escaped(struct util_buf *b, const char *s, int quotes)
{
    for (const char *p = s; *p != '\0'; p++) {
        if (*p == '\\')
            util_buf_puts(b, "\\\\");
        else if (*p == '\n')
            util_buf_puts(b, "\\n");
        else if (*p == '"' && quotes)
            util_buf_puts(b, "\\\"");
        else
            util_buf_append(b, p, 1);
    }
}

/* Go's strconv.FormatFloat(v, 'g', -1, 64) spelling for the common cases: shortest round trip. */
static void format_double(char *out, size_t size, double v)
{
    if (isnan(v)) {
        snprintf(out, size, "NaN");
        return;
    }
    if (isinf(v)) {
        snprintf(out, size, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    /* Whole numbers as integers: "%g" at its shortest writes 10 as "1e+01". */
    if (v > -1e15 && v < 1e15 && v == (double)(long long)v) {
        snprintf(out, size, "%.0f", v);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(out, size, "%.*g", prec, v);
        if (strtod(out, NULL) == v)
            return;
    }
}

/* {a="x",b="y"} with an optional extra le label; nothing when there are no labels at all. */
static void put_labels(struct util_buf *b, const struct metrics_family *fam, const struct series *s, const char *le)
{
    if (fam->nlabels == 0 && le == NULL)
        return;
    util_buf_puts(b, "{");
    for (size_t i = 0; i < fam->nlabels; i++) {
        if (i > 0)
            util_buf_puts(b, ",");
        util_buf_puts(b, fam->labels[i]);
        util_buf_puts(b, "=\"");
        buf_put_escaped(b, s->values[i], 1);
        util_buf_puts(b, "\"");
    }
    if (le != NULL) {
        if (fam->nlabels > 0)
            util_buf_puts(b, ",");
        util_buf_puts(b, "le=\"");
        util_buf_puts(b, le);
        util_buf_puts(b, "\"");
    }
    util_buf_puts(b, "}");
}

static void put_sample(struct util_buf *b, const struct metrics_family *fam, const char *suffix, const struct series *s,
                       const char *le, const char *value)
{
    util_buf_puts(b, fam->name);
    util_buf_puts(b, suffix);
    put_labels(b, fam, s, le);
    util_buf_puts(b, " ");
    util_buf_puts(b, value);
    util_buf_puts(b, "\n");
}

static void render_family(struct util_buf *b, const struct metrics_family *fam)
{
    static const char *const type_names[] = {"counter", "gauge", "histogram"};
    char num[64], le[64];

    util_buf_puts(b, "# HELP ");
    util_buf_puts(b, fam->name);
    util_buf_puts(b, " ");
    buf_put_escaped(b, fam->help, 0);
    util_buf_puts(b, "\n# TYPE ");
    util_buf_puts(b, fam->name);
    util_buf_puts(b, " ");
    util_buf_puts(b, type_names[fam->type]);
    util_buf_puts(b, "\n");

    for (const struct series *s = fam->series; s != NULL; s = s->next) {
        switch (fam->type) {
        case FAMILY_COUNTER:
            snprintf(num, sizeof(num), "%" PRIu64, s->counter);
            put_sample(b, fam, "", s, NULL, num);
            break;
        case FAMILY_GAUGE:
            format_double(num, sizeof(num), s->gauge);
            put_sample(b, fam, "", s, NULL, num);
            break;
        case FAMILY_HISTOGRAM: {
            uint64_t cumulative = 0;
            for (size_t i = 0; i <= fam->nbounds; i++) {
                cumulative += s->buckets[i];
                if (i < fam->nbounds)
                    format_double(le, sizeof(le), fam->bounds[i]);
                else
                    snprintf(le, sizeof(le), "+Inf");
                snprintf(num, sizeof(num), "%" PRIu64, cumulative);
                put_sample(b, fam, "_bucket", s, le, num);
            }
            format_double(num, sizeof(num), s->sum);
            put_sample(b, fam, "_sum", s, NULL, num);
            snprintf(num, sizeof(num), "%" PRIu64, s->count);
            put_sample(b, fam, "_count", s, NULL, num);
            break;
        }
        }
    }
}

char *metrics_render(struct metrics_registry *reg, size_t *len)
{
    struct util_buf b = {0};
    util_buf_append(&b, "", 0);
    if (reg != NULL) {
        pthread_mutex_lock(&reg->mu);
        for (const struct metrics_family *fam = reg->families; fam != NULL; fam = fam->next)
            render_family(&b, fam);
        pthread_mutex_unlock(&reg->mu);
    }
    if (len != NULL)
        *len = b.len;
    return b.data;
}
