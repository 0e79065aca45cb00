/*
 * output: tables, text, JSON and YAML for `kubectl raygate` (see output.h). Pure.
 */
#include "output.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "view.h"

#define GREEN "\033[32m"
#define YELLOW "\033[33m"
#define RED "\033[31m"
#define MAGENTA "\033[35m"
#define CYAN "\033[36m"
#define RESET "\033[0m"

static const char *str(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

/* Characters (UTF-8 code points) in s: its width in a terminal for the text we print. */
static size_t text_width(const char *s)
{
    size_t n = 0;
    for (; *s != '\0'; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* A table being built: rows x cols cells (owned strings), the first row the header. */
struct grid {
    size_t cols, rows, cap;
    char **cells;
};

static const char *state_colour(const char *cell)
{
    static const struct {
        const char *state, *colour;
    } colours[] = {{"Running", GREEN}, {"Admitted", CYAN}, {"Waiting", YELLOW}, {"Evicted", RED}, {"Backoff", MAGENTA}};
    for (size_t i = 0; i < sizeof(colours) / sizeof(colours[0]); i++) {
        if (strcmp(cell, colours[i].state) == 0)
            return colours[i].colour;
    }
    return NULL;
}

/* Prints t into b and frees its cells; colour_col: the column whose states are coloured (or (size_t)-1). */
static void grid_print(struct util_buf *b, struct grid *t, size_t colour_col, unsigned flags)
{
    size_t *width = util_calloc(t->cols, sizeof(*width));
    for (size_t i = 0; i < t->rows * t->cols; i++) {
        size_t w = text_width(t->cells[i]);
        if (w > width[i % t->cols])
            width[i % t->cols] = w;
    }
    for (size_t r = 0; r < t->rows; r++) {
        for (size_t c = 0; c < t->cols; c++) {
            const char *cell = t->cells[r * t->cols + c];
            const char *colour = (flags & OUTPUT_COLOUR) && r > 0 && c == colour_col ? state_colour(cell) : NULL;
            util_buf_printf(b, "%s%s%s", colour ? colour : "", cell, colour ? RESET : "");
            if (c + 1 < t->cols)
                util_buf_printf(b, "%*s", (int)(width[c] - text_width(cell) + 3), "");
            free(t->cells[r * t->cols + c]);
        }
        util_buf_puts(b, "\n");
    }
    free(width);
    free(t->cells);
}

/* Sets cell col of the row being filled (row t->rows); text is owned by the table. */
static void cell(struct grid *t, size_t col, char *text)
{
    size_t need = (t->rows + 1) * t->cols;
    if (need > t->cap) {
        t->cap = need * 2;
        t->cells = util_realloc(t->cells, t->cap * sizeof(*t->cells));
    }
    t->cells[t->rows * t->cols + col] = text;
}

static void header(struct grid *t, const char *const *names, size_t n)
{
    t->cols = n;
    for (size_t i = 0; i < n; i++)
        cell(t, i, util_strdup(names[i]));
    t->rows = 1;
}

static char *dash_or(const char *s)
{
    return util_strdup(s != NULL && *s != '\0' ? s : "-");
}

static char *int_cell(const json_t *v)
{
    return json_is_integer(v) ? util_strdupf("%" JSON_INTEGER_FORMAT, json_integer_value(v)) : util_strdup("-");
}

/* s cut to at most max characters, the last being "…" when cut (new). */
static char *cut(const char *s, size_t max)
{
    if (s == NULL)
        return util_strdup("-");
    if (text_width(s) <= max)
        return util_strdup(s);
    size_t i = 0, chars = 0;
    while (s[i] != '\0' && chars < max - 1) {
        i++;
        while (((unsigned char)s[i] & 0xC0) == 0x80)
            i++;
        chars++;
    }
    return util_strdupf("%.*s\u2026", (int)i, s);
}

/* "cpu=3,memory=4Gi", or "-" (new). */
static char *resource_cell(const json_t *list)
{
    struct util_buf b = {0};
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)list, k, v)
    {
        if (json_is_string(v))
            util_buf_printf(&b, "%s%s=%s", b.len ? "," : "", k, json_string_value(v));
        else if (json_is_integer(v))
            util_buf_printf(&b, "%s%s=%" JSON_INTEGER_FORMAT, b.len ? "," : "", k, json_integer_value(v));
    }
    if (b.len == 0)
        util_buf_puts(&b, "-");
    return util_buf_take(&b);
}

static char *age_cell(const json_t *row)
{
    char buf[16];
    const json_t *age = json_object_get(row, "ageSeconds");
    return json_is_integer(age) ? util_strdup(view_age(json_integer_value(age), buf, sizeof(buf))) : util_strdup("-");
}

static void gang_cells(struct grid *t, const json_t *row, unsigned flags)
{
    const json_t *pods = json_object_get(row, "pods");
    size_t c = 0;
    cell(t, c++, dash_or(str(row, "namespace")));
    cell(t, c++, dash_or(str(row, "name")));
    cell(t, c++, dash_or(str(row, "kind")));
    cell(t, c++, dash_or(str(row, "queue")));
    cell(t, c++, int_cell(json_object_get(row, "priority")));
    cell(t, c++, dash_or(str(row, "state")));
    char *bound = int_cell(json_object_get(pods, "bound")); /* "-": its pods are a worker's (dispatched) */
    cell(t, c++, util_strdupf("%s/%" JSON_INTEGER_FORMAT, bound, json_integer_value(json_object_get(pods, "min"))));
    free(bound);
    cell(t, c++, int_cell(json_object_get(row, "position")));
    if (flags & OUTPUT_WIDE) {
        cell(t, c++, age_cell(row));
        cell(t, c++, dash_or(str(row, "podGroup")));
        cell(t, c++, resource_cell(json_object_get(row, "minResources")));
        cell(t, c++, int_cell(json_object_get(row, "requeueCount")));
        const char *msg = str(row, "message");
        cell(t, c++, dash_or(msg != NULL && strcmp(str(row, "state"), "Backoff") != 0 ? msg : str(row, "waitingFor")));
    } else {
        cell(t, c++, cut(str(row, "waitingFor"), OUTPUT_REASON_WIDTH));
        cell(t, c++, age_cell(row));
    }
    t->rows++;
}

void output_gangs_table(struct util_buf *b, const json_t *rows, unsigned flags)
{
    static const char *const normal[] = {"NAMESPACE", "NAME", "KIND",     "QUEUE",       "PRIORITY",
                                         "STATE",     "PODS", "POSITION", "WAITING FOR", "AGE"};
    static const char *const wide[] = {"NAMESPACE", "NAME", "KIND",     "QUEUE",         "PRIORITY", "STATE",      "PODS",
                                       "POSITION",  "AGE",  "PODGROUP", "MIN RESOURCES", "REQUEUES", "WAITING FOR"};
    if (json_array_size(rows) == 0) {
        util_buf_puts(b, "No gangs found.\n");
        return;
    }
    struct grid t = {0};
    if (flags & OUTPUT_WIDE)
        header(&t, wide, sizeof(wide) / sizeof(wide[0]));
    else
        header(&t, normal, sizeof(normal) / sizeof(normal[0]));
    size_t i;
    const json_t *row;
    json_array_foreach(rows, i, row) gang_cells(&t, row, flags);
    grid_print(b, &t, 5, flags);
}

/* The DESERVED cell: derived ones marked (new). */
static char *deserved_cell(const json_t *row)
{
    char *c = resource_cell(json_object_get(row, "deserved"));
    if (!json_is_true(json_object_get(row, "deservedDerived")))
        return c;
    char *marked = util_strdupf("%s*", strcmp(c, "-") == 0 ? "0" : c);
    free(c);
    return marked;
}

static void queue_cells(struct grid *t, const json_t *row, unsigned flags)
{
    size_t c = 0;
    json_int_t depth = json_integer_value(json_object_get(row, "depth"));
    cell(t, c++, util_strdupf("%*s%s", (int)(depth > 0 && depth < 64 ? 2 * depth : 0), "", str(row, "name")));
    cell(t, c++, dash_or(str(row, "parent")));
    cell(t, c++, dash_or(str(row, "state")));
    cell(t, c++, resource_cell(json_object_get(row, "capability")));
    cell(t, c++, resource_cell(json_object_get(row, "guarantee")));
    cell(t, c++, deserved_cell(row));
    cell(t, c++, resource_cell(json_object_get(row, "allocated")));
    cell(t, c++, dash_or(str(row, "share")));
    cell(t, c++, int_cell(json_object_get(row, "running")));
    cell(t, c++, int_cell(json_object_get(row, "pending")));
    if (flags & OUTPUT_WIDE) {
        cell(t, c++, int_cell(json_object_get(row, "inqueue")));
        cell(t, c++, int_cell(json_object_get(row, "weight")));
    }
    t->rows++;
}

void output_queues_table(struct util_buf *b, const json_t *rows, unsigned flags)
{
    static const char *const names[] = {"NAME",      "PARENT", "STATE",   "CAPABILITY", "GUARANTEE", "DESERVED",
                                        "ALLOCATED", "SHARE",  "RUNNING", "PENDING",    "INQUEUE",   "WEIGHT"};
    if (json_array_size(rows) == 0) {
        util_buf_puts(b, "No queues found.\n");
        return;
    }
    struct grid t = {0};
    header(&t, names, (flags & OUTPUT_WIDE) ? 12 : 10);
    size_t i;
    const json_t *row;
    int derived = 0;
    json_array_foreach(rows, i, row)
    {
        queue_cells(&t, row, flags);
        derived |= json_is_true(json_object_get(row, "deservedDerived"));
    }
    grid_print(b, &t, (size_t)-1, flags);
    if (derived)
        util_buf_puts(b, "* derived by weight\n");
    json_array_foreach(rows, i, row)
    {
        if (str(row, "treeError") != NULL)
            util_buf_printf(b, "queue %s: %s\n", str(row, "name"), str(row, "treeError"));
    }
}

/* Whether the domains table shows resource name: extended resources, cpu and memory; wide: every one. */
static int domain_column(const char *name, unsigned flags)
{
    return (flags & OUTPUT_WIDE) || strchr(name, '/') != NULL || strcmp(name, "cpu") == 0 || strcmp(name, "memory") == 0;
}

/* "a, b, c" of the strings of list (borrowed), or "-" (new). */
static char *join_cell(const json_t *list)
{
    struct util_buf b = {0};
    size_t i;
    const json_t *v;
    json_array_foreach(list, i, v) util_buf_printf(&b, "%s%s", b.len ? ", " : "", json_string_value(v));
    if (b.len == 0)
        util_buf_puts(&b, "-");
    return util_buf_take(&b);
}

static void domain_cells(struct grid *t, const json_t *row, int tier, unsigned flags)
{
    size_t c = 0, i;
    const json_t *r;
    cell(t, c++, dash_or(str(row, "domain")));
    if (tier)
        cell(t, c++, int_cell(json_object_get(row, "tier")));
    cell(t, c++, int_cell(json_object_get(row, "nodes")));
    json_array_foreach(json_object_get(row, "resources"), i, r)
    {
        if (domain_column(str(r, "name"), flags))
            cell(t, c++, util_strdupf("%s/%s", str(r, "free"), str(r, "allocatable")));
    }
    char *gangs = join_cell(json_object_get(row, "gangs"));
    cell(t, c++, (flags & OUTPUT_WIDE) ? util_strdup(gangs) : cut(gangs, OUTPUT_REASON_WIDTH));
    free(gangs);
    t->rows++;
}

void output_domains_table(struct util_buf *b, const json_t *rows, unsigned flags)
{
    const json_t *first = NULL, *row, *r;
    size_t i, k, shown = 0;
    json_array_foreach(rows, i, row) first = first == NULL && str(row, "error") == NULL ? row : first;
    if (first == NULL) {
        util_buf_puts(b, "No domains found.\n");
    } else {
        int tier = json_is_integer(json_object_get(first, "tier"));
        const json_t *res = json_object_get(first, "resources");
        char **names = util_calloc(json_array_size(res) + 4, sizeof(*names));
        names[shown++] = util_strdup("DOMAIN");
        if (tier)
            names[shown++] = util_strdup("TIER");
        names[shown++] = util_strdup("NODES");
        json_array_foreach(res, k, r)
        {
            if (!domain_column(str(r, "name"), flags))
                continue;
            names[shown] = util_strdupf("%s FREE/ALLOC", str(r, "name"));
            for (char *p = names[shown++]; *p != '\0'; p++)
                *p = (char)toupper((unsigned char)*p);
        }
        names[shown++] = util_strdup("GANGS");
        struct grid t = {0};
        header(&t, (const char *const *)names, shown);
        json_array_foreach(rows, i, row)
        {
            if (str(row, "error") == NULL)
                domain_cells(&t, row, tier, flags);
        }
        grid_print(b, &t, (size_t)-1, flags);
        for (k = 0; k < shown; k++)
            free(names[k]);
        free(names);
    }
    json_array_foreach(rows, i, row)
    {
        if (str(row, "error") != NULL)
            util_buf_printf(b, "HyperNode %s ignored: %s\n", str(row, "domain"), str(row, "error"));
    }
}

void output_asked_table(struct util_buf *b, const json_t *rows, unsigned flags)
{
    static const char *const names[] = {"ASKED FOR", "GANGS", "SHOW WITH"};
    if (json_array_size(rows) == 0) {
        util_buf_puts(b, "No gang asks for a topology. Show the domains of a node label with --key LABEL, or the HyperNodes "
                         "with --hypernodes.\n");
        return;
    }
    struct grid t = {0};
    header(&t, names, 3);
    size_t i;
    const json_t *row;
    json_array_foreach(rows, i, row)
    {
        json_int_t tier = json_integer_value(json_object_get(row, "tier"));
        char *gangs = join_cell(json_object_get(row, "gangs"));
        cell(&t, 0,
             str(row, "key") != NULL ? util_strdupf("label %s", str(row, "key"))
             : tier > 0              ? util_strdupf("HyperNode of tier <= %" JSON_INTEGER_FORMAT, tier)
                                     : util_strdup("HyperNode (any tier)"));
        cell(&t, 1, (flags & OUTPUT_WIDE) ? util_strdup(gangs) : cut(gangs, OUTPUT_REASON_WIDTH));
        cell(&t, 2, dash_or(str(row, "command")));
        free(gangs);
        t.rows++;
    }
    grid_print(b, &t, (size_t)-1, flags);
}

static void why_gang(struct util_buf *b, const json_t *g, unsigned flags)
{
    const json_t *pods = json_object_get(g, "pods"), *prio = json_object_get(g, "priority");
    const char *state = str(g, "state"), *colour = (flags & OUTPUT_COLOUR) ? state_colour(state) : NULL;
    char *res = resource_cell(json_object_get(g, "minResources"));
    util_buf_printf(b, "Gang:       %s/%s (%s), PodGroup %s\n", str(g, "namespace"), str(g, "name"), str(g, "kind"),
                    str(g, "podGroup"));
    util_buf_printf(b, "Queue:      %s", str(g, "queue") ? str(g, "queue") : "-");
    if (json_is_integer(json_object_get(g, "position")))
        util_buf_printf(b, ", position %" JSON_INTEGER_FORMAT, json_integer_value(json_object_get(g, "position")));
    util_buf_printf(b, "\nPriority:   ");
    if (json_is_integer(prio))
        util_buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(prio));
    else
        util_buf_puts(b, "unknown");
    if (str(g, "priorityClassName") != NULL)
        util_buf_printf(b, " (%s)", str(g, "priorityClassName"));
    util_buf_printf(b, "\nState:      %s%s%s", colour ? colour : "", state, colour ? RESET : "");
    if (str(g, "reason") != NULL)
        util_buf_printf(b, " (%s)", str(g, "reason"));
    util_buf_printf(b, "\nNeeds:      %" JSON_INTEGER_FORMAT " pods; %s\n", json_integer_value(json_object_get(pods, "min")), res);
    if (json_is_integer(json_object_get(pods, "bound")))
        util_buf_printf(b, "Pods:       %" JSON_INTEGER_FORMAT " %s\n", json_integer_value(json_object_get(pods, "bound")),
                        str(pods, "counted"));
    else
        util_buf_printf(b, "Pods:       %s\n", str(pods, "counted")); /* "on worker NAME" */
    if (str(g, "message") != NULL)
        util_buf_printf(b, "Reason:     %s\n", str(g, "message"));
    free(res);
}

void output_why(struct util_buf *b, const json_t *why, unsigned flags)
{
    size_t i;
    const json_t *v;
    why_gang(b, json_object_get(why, "gang"), flags);
    util_buf_puts(b, view_state_admitted(str(json_object_get(why, "gang"), "state")) ? "Status:\n" : "To be admitted:\n");
    json_array_foreach(json_object_get(why, "explanation"), i, v) util_buf_printf(b, "  %s\n", json_string_value(v));
    if (json_array_size(json_object_get(why, "ahead")) > 0) {
        util_buf_puts(b, "Ahead of it in the queue (admitted first when they fit):\n");
        json_array_foreach(json_object_get(why, "ahead"), i, v)
        {
            util_buf_printf(b, "  %s/%s (priority ", str(v, "namespace"), str(v, "name"));
            char *p = int_cell(json_object_get(v, "priority"));
            util_buf_printf(b, "%s)\n", p);
            free(p);
        }
    }
    if (json_array_size(json_object_get(why, "events")) > 0) {
        util_buf_puts(b, "Events:\n");
        json_array_foreach(json_object_get(why, "events"), i, v)
        {
            char *age = age_cell(v);
            util_buf_printf(b, "  %-6s %-8s %-18s %s\n", age, str(v, "type") ? str(v, "type") : "-",
                            str(v, "reason") ? str(v, "reason") : "-", str(v, "message") ? str(v, "message") : "");
            free(age);
        }
    }
}

void output_json(struct util_buf *b, const json_t *v)
{
    char *s = json_dumps(v, JSON_INDENT(4) | JSON_ENCODE_ANY);
    util_buf_puts(b, s != NULL ? s : "null");
    util_buf_puts(b, "\n");
    free(s);
}

/* ---- YAML ---- */

/* Whether a plain scalar s would read back as something other than a string. */
static int needs_quotes(const char *s)
{
    static const char *const words[] = {"true", "false", "yes", "no", "on", "off", "null", "~", "y", "n"};
    if (*s == '\0' || isspace((unsigned char)*s))
        return 1;
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        if (strcasecmp(s, words[i]) == 0)
            return 1;
    }
    char *end;
    (void)strtod(s, &end);
    return *end == '\0' || strchr("-+.0123456789", *s) != NULL;
}

static int emit(yaml_emitter_t *e, yaml_event_t *ev)
{
    return yaml_emitter_emit(e, ev) ? 0 : -1;
}

static int emit_scalar(yaml_emitter_t *e, const char *s, int is_string)
{
    yaml_event_t ev;
    int plain = !is_string || !needs_quotes(s);
    yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), plain, 1,
                                 plain ? YAML_ANY_SCALAR_STYLE : YAML_DOUBLE_QUOTED_SCALAR_STYLE);
    return emit(e, &ev);
}

static int emit_value(yaml_emitter_t *e, const json_t *v)
{
    yaml_event_t ev;
    char buf[32];
    size_t i;
    const char *k;
    json_t *item;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
        if (emit(e, &ev) != 0)
            return -1;
        json_object_foreach((json_t *)v, k, item)
        {
            if (emit_scalar(e, k, 1) != 0 || emit_value(e, item) != 0)
                return -1;
        }
        yaml_mapping_end_event_initialize(&ev);
        return emit(e, &ev);
    case JSON_ARRAY:
        yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
        if (emit(e, &ev) != 0)
            return -1;
        json_array_foreach(v, i, item)
        {
            if (emit_value(e, item) != 0)
                return -1;
        }
        yaml_sequence_end_event_initialize(&ev);
        return emit(e, &ev);
    case JSON_STRING:
        return emit_scalar(e, json_string_value(v), 1);
    case JSON_INTEGER:
        snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return emit_scalar(e, buf, 0);
    case JSON_REAL:
        snprintf(buf, sizeof(buf), "%.17g", json_real_value(v));
        return emit_scalar(e, buf, 0);
    case JSON_TRUE:
        return emit_scalar(e, "true", 0);
    case JSON_FALSE:
        return emit_scalar(e, "false", 0);
    default:
        return emit_scalar(e, "null", 0);
    }
}

static int write_buf(void *data, unsigned char *bytes, size_t size)
{
    util_buf_append(data, bytes, size);
    return 1;
}

int output_yaml(struct util_buf *b, const json_t *v)
{
    yaml_emitter_t e;
    yaml_event_t ev;
    int rc = -1;
    if (!yaml_emitter_initialize(&e))
        return -1;
    yaml_emitter_set_output(&e, write_buf, b);
    yaml_emitter_set_unicode(&e, 1);
    yaml_emitter_set_width(&e, -1);
    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    if (emit(&e, &ev) != 0)
        goto out;
    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
    if (emit(&e, &ev) != 0 || emit_value(&e, v) != 0)
        goto out;
    yaml_document_end_event_initialize(&ev, 1);
    if (emit(&e, &ev) != 0)
        goto out;
    yaml_stream_end_event_initialize(&ev);
    rc = emit(&e, &ev);
out:
    yaml_emitter_delete(&e);
    return rc;
}
