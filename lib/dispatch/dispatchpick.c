#include "dispatchpick.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

void dispatch_pick_to_init(struct dispatch_to *to)
{
    memset(to, 0, sizeof(*to));
}

void dispatch_pick_to_finish(struct dispatch_to *to)
{
    if (to == NULL)
        return;
    for (size_t i = 0; i < to->n; i++)
        free(to->names[i]);
    free(to->names);
    dispatch_pick_to_init(to);
}

static int blank(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

int dispatch_pick_to_parse(const char *value, struct dispatch_to *out, struct error *err)
{
    dispatch_pick_to_finish(out);
    if (value == NULL)
        return 0;
    size_t entry = 1;
    for (const char *p = value;; entry++) {
        const char *end = strchr(p, ',');
        const char *stop = end != NULL ? end : p + strlen(p);
        const char *a = p, *b = stop;
        while (a < b && blank(*a))
            a++;
        while (b > a && blank(b[-1]))
            b--;
        if (a == b) {
            error_setf(err, NAMES_ANNOTATION_DISPATCH_TO ": empty entry %zu", entry);
            goto fail;
        }
        char *name = util_memdup(a, (size_t)(b - a));
        if (dispatch_pick_to_index(out, name) != DISPATCH_NO_WORKER) {
            error_setf(err, NAMES_ANNOTATION_DISPATCH_TO ": \"%s\" named twice", name);
            free(name);
            goto fail;
        }
        out->names = util_realloc(out->names, (out->n + 1) * sizeof(*out->names));
        out->names[out->n++] = name;
        if (end == NULL)
            return 0;
        p = end + 1;
    }
fail:
    util_one_line(err->message);
    dispatch_pick_to_finish(out);
    return -1;
}

size_t dispatch_pick_to_index(const struct dispatch_to *to, const char *name)
{
    for (size_t i = 0; i < to->n; i++)
        if (strcmp(to->names[i], name) == 0)
            return i;
    return DISPATCH_NO_WORKER;
}

size_t dispatch_pick(const struct dispatch_candidate *cand, size_t n)
{
    size_t best = DISPATCH_NO_WORKER;
    for (size_t i = 0; i < n; i++) {
        const struct dispatch_verdict *v = cand[i].verdict;
        if (!cand[i].up || v == NULL || !v->fits)
            continue;
        /* Strictly less: a tie keeps the worker named first. */
        if (best == DISPATCH_NO_WORKER || v->stranded < cand[best].verdict->stranded)
            best = i;
    }
    return best;
}

static char *clause_text(const struct dispatch_candidate *c)
{
    if (!c->up)
        return util_strdupf("unreachable: %s", c->error != NULL ? c->error : "no answer");
    if (c->verdict == NULL)
        return util_strdup("not weighed yet");
    if (c->verdict->fits)
        return util_strdup("fits");
    return util_strdup(c->verdict->message != NULL ? c->verdict->message : admit_result_reason_name(c->verdict->reason));
}

/* What one worker's clause says after "name: ", one line of valid UTF-8 (a worker's error may hold anything). New string. */
static char *clause(const struct dispatch_candidate *c)
{
    char *text = clause_text(c);
    util_one_line(text);
    return text;
}

char *dispatch_pick_why(const struct dispatch_candidate *cand, size_t n)
{
    struct util_buf b = {0};
    for (size_t i = 0; i < n; i++) {
        char *text = clause(&cand[i]);
        util_buf_printf(&b, "%s%s: %s", i > 0 ? "; " : "", cand[i].name, text);
        free(text);
    }
    return util_buf_take(&b);
}

json_t *dispatch_pick_reasons(const struct dispatch_candidate *cand, size_t n)
{
    json_t *out = json_object();
    for (size_t i = 0; i < n; i++) {
        char *text = clause(&cand[i]);
        json_object_set_new(out, cand[i].name, json_string(text));
        free(text);
    }
    return out;
}
