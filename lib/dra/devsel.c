#include "devsel.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devselparse.h"
#include "quantity.h"
#include "util.h"

/* The evaluated tree: devselparse's syntax lowered to the subset, with literals converted once. */
enum expr_op {
    X_AND,
    X_OR,
    X_NOT,
    X_EQ,
    X_NE,
    X_LT,
    X_LE,
    X_GT,
    X_GE,
    X_DRIVER, /* device.driver */
    X_ATTR,   /* device.attributes[domain].id */
    X_CAP,    /* device.capacity[domain].id */
    X_LIT,    /* lit */
    X_METHOD, /* a.method(b) on quantities or versions */
    X_HAS,    /* "id" in device.attributes[domain] (a: the X_ATTR or X_CAP looked up) */
    X_IN,     /* a in [list...], a list of literals */
};

enum method { M_COMPARE_TO, M_IS_GREATER_THAN, M_IS_LESS_THAN };

struct expr {
    int op;
    int method;
    struct expr *a, *b;
    char *domain, *id;       /* X_ATTR, X_CAP */
    struct devsel_value lit; /* X_LIT; lit.s points at str */
    char *str;
    struct expr **list; /* X_IN */
    size_t nlist;
};

struct devsel {
    struct expr *root; /* NULL when not exact */
    char *driver;
    char *unevaluated;
};

/* A semantic version (semver.org 2.0.0); pre borrowed from the parsed text, not NUL-terminated. */
struct semver {
    uint64_t num[3];
    const char *pre;
    size_t prelen;
};

static int is_ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '-';
}

/* A number without leading zeros at *p (advanced); -1 when there is none or it overflows. */
static int semver_number(const char **p, uint64_t *out)
{
    const char *s = *p;
    if (!isdigit((unsigned char)*s) || (s[0] == '0' && isdigit((unsigned char)s[1])))
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE)
        return -1;
    *out = v;
    *p = end;
    return 0;
}

/* Dot-separated identifiers of [0-9A-Za-z-] at *p (advanced); numeric ones without leading zeros when strict. */
static int semver_idents(const char **p, int strict)
{
    const char *s = *p;
    while (1) {
        const char *id = s;
        int digits = 1;
        for (; is_ident_char(*s); s++)
            digits = digits && isdigit((unsigned char)*s);
        if (s == id || (strict && digits && s - id > 1 && id[0] == '0'))
            return -1;
        if (*s != '.')
            break;
        s++;
    }
    *p = s;
    return 0;
}

static int semver_parse(const char *s, struct semver *v)
{
    memset(v, 0, sizeof(*v));
    for (int k = 0; k < 3; k++)
        if ((k > 0 && *s++ != '.') || semver_number(&s, &v->num[k]) != 0)
            return -1;
    if (*s == '-') {
        v->pre = ++s;
        if (semver_idents(&s, 1) != 0)
            return -1;
        v->prelen = (size_t)(s - v->pre);
    }
    if (*s == '+') {
        s++;
        if (semver_idents(&s, 0) != 0)
            return -1;
    }
    return *s == '\0' ? 0 : -1;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
    return a < b ? -1 : a > b;
}

/* semver.org rule 11: a version with a pre-release sorts before one without; identifiers compare in turn. */
static int semver_compare(const struct semver *a, const struct semver *b)
{
    for (int k = 0; k < 3; k++)
        if (a->num[k] != b->num[k])
            return cmp_u64(a->num[k], b->num[k]);
    if (a->pre == NULL || b->pre == NULL)
        return (a->pre == NULL) - (b->pre == NULL);
    const char *x = a->pre, *xe = a->pre + a->prelen, *y = b->pre, *ye = b->pre + b->prelen;
    while (x < xe && y < ye) {
        size_t xl = strcspn(x, ".+"), yl = strcspn(y, ".+");
        xl = xl > (size_t)(xe - x) ? (size_t)(xe - x) : xl;
        yl = yl > (size_t)(ye - y) ? (size_t)(ye - y) : yl;
        int xn = strspn(x, "0123456789") >= xl, yn = strspn(y, "0123456789") >= yl;
        int c;
        if (xn && yn) /* no leading zeros: the longer number is the larger */
            c = xl != yl ? cmp_u64(xl, yl) : memcmp(x, y, xl);
        else if (xn != yn)
            c = xn ? -1 : 1;
        else
            c = memcmp(x, y, xl < yl ? xl : yl) != 0 ? memcmp(x, y, xl < yl ? xl : yl) : cmp_u64(xl, yl);
        if (c != 0)
            return c > 0 ? 1 : -1;
        x += xl + (x + xl < xe);
        y += yl + (y + yl < ye);
    }
    return (x < xe) - (y < ye);
}

static void expr_free(struct expr *x)
{
    if (x == NULL)
        return;
    expr_free(x->a);
    expr_free(x->b);
    for (size_t k = 0; k < x->nlist; k++)
        expr_free(x->list[k]);
    free(x->list);
    free(x->domain);
    free(x->id);
    free(x->str);
    free(x);
}

void devsel_free(struct devsel *s)
{
    if (s == NULL)
        return;
    expr_free(s->root);
    free(s->driver);
    free(s->unevaluated);
    free(s);
}

int devsel_exact(const struct devsel *s)
{
    return s->root != NULL;
}

const char *devsel_driver(const struct devsel *s)
{
    return s->driver;
}

const char *devsel_unevaluated(const struct devsel *s)
{
    return s->unevaluated;
}

static struct expr *expr_new(int op)
{
    struct expr *x = util_calloc(1, sizeof(*x));
    x->op = op;
    return x;
}

/* Records the first part not evaluated: the node's text and why. Returns NULL, for the caller to return. */
static struct expr *beyond(const struct devselparse_node *n, const char *src, char **unevaluated, const char *why)
{
    if (*unevaluated == NULL) {
        *unevaluated = util_strdupf("%.*s: %s", (int)(n->end - n->start), src + n->start, why);
        util_one_line(*unevaluated); /* selectors are often multi-line YAML; the text goes to logs and `why` */
    }
    return NULL;
}

static int is_device(const struct devselparse_node *n)
{
    return n->op == DEVSELPARSE_IDENT && strcmp(n->text, "device") == 0;
}

static int is_string(const struct devselparse_node *n)
{
    return n != NULL && n->op == DEVSELPARSE_STRING;
}

/* device.attributes["D"].ID, device.attributes["D"]["ID"] and the same of capacity; NULL otherwise. */
static struct expr *lower_attr(const struct devselparse_node *n)
{
    const struct devselparse_node *map = n->kid[0], *field;
    const char *id;
    if (n->op == DEVSELPARSE_MEMBER) {
        id = n->text;
    } else if (n->op == DEVSELPARSE_INDEX && is_string(n->kid[1])) {
        id = n->kid[1]->text;
    } else {
        return NULL;
    }
    if (map->op != DEVSELPARSE_INDEX || !is_string(map->kid[1]))
        return NULL;
    field = map->kid[0];
    if (field->op != DEVSELPARSE_MEMBER || !is_device(field->kid[0]))
        return NULL;
    int op = strcmp(field->text, "attributes") == 0 ? X_ATTR : strcmp(field->text, "capacity") == 0 ? X_CAP : -1;
    if (op < 0)
        return NULL;
    struct expr *x = expr_new(op);
    x->domain = util_strdup(map->kid[1]->text);
    x->id = util_strdup(id);
    return x;
}

/* quantity("40Gi") and semver("1.2.3"): literals converted once. */
static struct expr *lower_literal_call(const struct devselparse_node *n, const char *src, char **unevaluated)
{
    int quantity = strcmp(n->text, "quantity") == 0;
    if ((!quantity && strcmp(n->text, "semver") != 0) || n->nkid != 2 || !is_string(n->kid[1]))
        return beyond(n, src, unevaluated, "a function call not evaluated");
    const char *arg = n->kid[1]->text;
    struct quantity q;
    struct semver v;
    if (quantity && quantity_parse(arg, QUANTITY_UNIT_BASE, &q, NULL) != 0)
        return beyond(n, src, unevaluated, "not a quantity");
    if (!quantity && semver_parse(arg, &v) != 0)
        return beyond(n, src, unevaluated, "not a semantic version");
    struct expr *x = expr_new(X_LIT);
    x->str = util_strdup(arg);
    x->lit.kind = quantity ? DEVSEL_QUANTITY : DEVSEL_VERSION;
    x->lit.i = quantity ? q.value : 0;
    x->lit.s = x->str;
    return x;
}

static struct expr *lower(const struct devselparse_node *n, const char *src, char **unevaluated);

static struct expr *lower_pair(int op, const struct devselparse_node *a, const struct devselparse_node *b, const char *src,
                               char **unevaluated)
{
    struct expr *x = expr_new(op);
    x->a = lower(a, src, unevaluated);
    x->b = x->a != NULL && b != NULL ? lower(b, src, unevaluated) : NULL;
    if (x->a == NULL || (b != NULL && x->b == NULL)) {
        expr_free(x);
        return NULL;
    }
    return x;
}

static struct expr *lower_method(const struct devselparse_node *n, const char *src, char **unevaluated)
{
    static const char *const names[] = {
        [M_COMPARE_TO] = "compareTo", [M_IS_GREATER_THAN] = "isGreaterThan", [M_IS_LESS_THAN] = "isLessThan"};
    for (int m = 0; m < 3; m++) {
        if (strcmp(n->text, names[m]) == 0 && n->nkid == 2) {
            struct expr *x = lower_pair(X_METHOD, n->kid[0], n->kid[1], src, unevaluated);
            if (x != NULL)
                x->method = m;
            return x;
        }
    }
    return beyond(n, src, unevaluated, "a method call not evaluated");
}

/*
 * `"ID" in device.attributes["DOMAIN"]` (or capacity): whether the device has
 * it, the guard real selectors put before a comparison; `x in [literals]`.
 * `"DOMAIN" in device.attributes` and other forms are not evaluated.
 */
static struct expr *lower_in(const struct devselparse_node *n, const char *src, char **unevaluated)
{
    const struct devselparse_node *what = n->kid[0], *where = n->kid[1];
    if (where->op == DEVSELPARSE_INDEX && is_string(what)) {
        struct devselparse_node field = {.op = DEVSELPARSE_MEMBER, .text = what->text, .kid = &n->kid[1], .nkid = 1};
        struct expr *a = lower_attr(&field);
        if (a != NULL) {
            struct expr *x = expr_new(X_HAS);
            x->a = a;
            return x;
        }
    }
    if (where->op != DEVSELPARSE_LIST)
        return beyond(n, src, unevaluated, "the in operator not evaluated");
    for (size_t k = 0; k < where->nkid; k++) {
        int op = where->kid[k]->op;
        if (op != DEVSELPARSE_STRING && op != DEVSELPARSE_INT && op != DEVSELPARSE_BOOL)
            return beyond(where->kid[k], src, unevaluated, "not a literal: in evaluates lists of literals");
    }
    struct expr *x = expr_new(X_IN);
    x->a = lower(what, src, unevaluated);
    if (x->a == NULL) {
        expr_free(x);
        return NULL;
    }
    x->list = util_calloc(where->nkid, sizeof(*x->list));
    for (size_t k = 0; k < where->nkid; k++)
        x->list[x->nlist++] = lower(where->kid[k], src, unevaluated);
    return x;
}

static struct expr *lower_operand(const struct devselparse_node *n, const char *src, char **unevaluated)
{
    struct expr *x;
    switch (n->op) {
    case DEVSELPARSE_STRING:
    case DEVSELPARSE_INT:
    case DEVSELPARSE_BOOL:
        x = expr_new(X_LIT);
        x->lit.kind = n->op == DEVSELPARSE_STRING ? DEVSEL_STRING : n->op == DEVSELPARSE_INT ? DEVSEL_INT : DEVSEL_BOOL;
        x->lit.i = n->i;
        x->str = util_strdup(n->text);
        x->lit.s = x->str;
        return x;
    case DEVSELPARSE_CALL:
        return n->kid[0] == NULL ? lower_literal_call(n, src, unevaluated) : lower_method(n, src, unevaluated);
    case DEVSELPARSE_MEMBER:
    case DEVSELPARSE_INDEX:
        if (n->op == DEVSELPARSE_MEMBER && is_device(n->kid[0]) && strcmp(n->text, "driver") == 0)
            return expr_new(X_DRIVER);
        x = lower_attr(n);
        return x != NULL ? x : beyond(n, src, unevaluated, "a field not evaluated");
    case DEVSELPARSE_IN:
        return lower_in(n, src, unevaluated);
    case DEVSELPARSE_ARITH:
    case DEVSELPARSE_NEG:
        return beyond(n, src, unevaluated, "arithmetic not evaluated");
    case DEVSELPARSE_COND:
        return beyond(n, src, unevaluated, "a conditional not evaluated");
    case DEVSELPARSE_LIST:
        return beyond(n, src, unevaluated, "a list not evaluated");
    default:
        return beyond(n, src, unevaluated, "not evaluated");
    }
}

static struct expr *lower(const struct devselparse_node *n, const char *src, char **unevaluated)
{
    static const struct {
        int from, to;
    } ops[] = {{DEVSELPARSE_AND, X_AND}, {DEVSELPARSE_OR, X_OR}, {DEVSELPARSE_EQ, X_EQ},
               {DEVSELPARSE_NE, X_NE},   {DEVSELPARSE_LT, X_LT}, {DEVSELPARSE_LE, X_LE},
               {DEVSELPARSE_GT, X_GT},   {DEVSELPARSE_GE, X_GE}, {DEVSELPARSE_NOT, X_NOT}};
    for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
        if (n->op == ops[k].from)
            return lower_pair(ops[k].to, n->kid[0], n->nkid > 1 ? n->kid[1] : NULL, src, unevaluated);
    return lower_operand(n, src, unevaluated);
}

/* The string of a `device.driver == "x"` (or `"x" == device.driver`) conjunct of n, or NULL. */
static const char *driver_of(const struct devselparse_node *n)
{
    if (n->op == DEVSELPARSE_AND) {
        const char *d = driver_of(n->kid[0]);
        return d != NULL ? d : driver_of(n->kid[1]);
    }
    if (n->op != DEVSELPARSE_EQ)
        return NULL;
    for (int k = 0; k < 2; k++) {
        const struct devselparse_node *f = n->kid[k], *v = n->kid[1 - k];
        if (f->op == DEVSELPARSE_MEMBER && is_device(f->kid[0]) && strcmp(f->text, "driver") == 0 && is_string(v))
            return v->text;
    }
    return NULL;
}

/* An expression that does not parse: its driver from the top-level conjuncts that do. */
static char *driver_of_conjuncts(const char *expr)
{
    size_t starts[32], ends[32];
    size_t n = devselparse_conjuncts(expr, strlen(expr), starts, ends, 32);
    char *driver = NULL;
    for (size_t k = 0; k < n && driver == NULL; k++) {
        struct devselparse_node *c = devselparse_parse(expr + starts[k], ends[k] - starts[k], NULL);
        if (c != NULL)
            driver = util_strdup(driver_of(c));
        devselparse_free(c);
    }
    return driver;
}

struct devsel *devsel_compile(const char *expr)
{
    struct devsel *s = util_calloc(1, sizeof(*s));
    struct error err = {{0}};
    expr = expr != NULL ? expr : "";
    struct devselparse_node *tree = devselparse_parse(expr, strlen(expr), &err);
    if (tree == NULL) {
        s->unevaluated = util_strdupf("the expression does not parse: %s", err.message);
        util_one_line(s->unevaluated);
        s->driver = driver_of_conjuncts(expr);
        return s;
    }
    s->driver = util_strdup(driver_of(tree));
    s->root = lower(tree, expr, &s->unevaluated);
    devselparse_free(tree);
    return s;
}

static const struct devsel_value *lookup(const struct devsel_attr *attrs, size_t n, const char *domain, const char *id,
                                         const char *driver)
{
    size_t dlen = strlen(domain);
    for (size_t k = 0; k < n; k++) {
        const char *name = attrs[k].name, *slash = strchr(name, '/');
        if (slash != NULL ? (size_t)(slash - name) == dlen && strncmp(name, domain, dlen) == 0 && strcmp(slash + 1, id) == 0
                          : strcmp(name, id) == 0 && util_streq(domain, driver))
            return &attrs[k].value;
    }
    return NULL;
}

static const struct devsel_value none = {.kind = DEVSEL_NONE};

static struct devsel_value boolean(int b)
{
    return (struct devsel_value){.kind = DEVSEL_BOOL, .i = b != 0};
}

/* -1, 0, 1; or 2 when a and b do not compare (kinds differ, or a version does not parse). */
static int order(const struct devsel_value *a, const struct devsel_value *b)
{
    struct semver x, y;
    if (a->kind != b->kind || a->kind == DEVSEL_NONE)
        return 2;
    switch (a->kind) {
    case DEVSEL_STRING: {
        int c = strcmp(a->s, b->s);
        return c < 0 ? -1 : c > 0;
    }
    case DEVSEL_VERSION:
        return semver_parse(a->s, &x) == 0 && semver_parse(b->s, &y) == 0 ? semver_compare(&x, &y) : 2;
    default:
        return a->i < b->i ? -1 : a->i > b->i;
    }
}

/*
 * CEL's semantics: a missing attribute is an error, and so is an ordering of
 * different kinds (no overload), or of quantities and versions (they compare
 * by their methods only); == and != of different kinds are false and true
 * (heterogeneous equality). An error reaching the top does not match.
 */
static struct devsel_value compare(int op, const struct devsel_value *a, const struct devsel_value *b)
{
    if (a->kind == DEVSEL_NONE || b->kind == DEVSEL_NONE)
        return none;
    int c = order(a, b);
    if (op == X_EQ || op == X_NE)
        return boolean((c == 0) == (op == X_EQ));
    if (c == 2 || a->kind == DEVSEL_QUANTITY || a->kind == DEVSEL_VERSION)
        return none;
    return boolean(op == X_LT ? c < 0 : op == X_LE ? c <= 0 : op == X_GT ? c > 0 : c >= 0);
}

static struct devsel_value eval(const struct expr *x, const struct devsel_device *d);

/* && and || as CEL has them: commutative, an error absorbed by the side that decides (false && error is false). */
static struct devsel_value logic(const struct expr *x, const struct devsel_device *d)
{
    int decides = x->op == X_OR; /* the value that decides: true for ||, false for && */
    struct devsel_value a = eval(x->a, d);
    if (a.kind == DEVSEL_BOOL && a.i == decides)
        return a;
    struct devsel_value b = eval(x->b, d);
    if (b.kind == DEVSEL_BOOL && b.i == decides)
        return b;
    return a.kind == DEVSEL_BOOL && b.kind == DEVSEL_BOOL ? boolean(!decides) : none;
}

static struct devsel_value method(const struct expr *x, const struct devsel_device *d)
{
    struct devsel_value a = eval(x->a, d), b = eval(x->b, d);
    if ((a.kind != DEVSEL_QUANTITY && a.kind != DEVSEL_VERSION) || a.kind != b.kind)
        return none;
    int c = order(&a, &b);
    if (c == 2)
        return none;
    if (x->method == M_COMPARE_TO)
        return (struct devsel_value){.kind = DEVSEL_INT, .i = c};
    return boolean(x->method == M_IS_GREATER_THAN ? c > 0 : c < 0);
}

/* x->a in x->list: == against each (heterogeneous equality); an error in x->a stays one. */
static struct devsel_value member(const struct expr *x, const struct devsel_device *d)
{
    struct devsel_value a = eval(x->a, d);
    if (a.kind == DEVSEL_NONE)
        return none;
    for (size_t k = 0; k < x->nlist; k++)
        if (order(&a, &x->list[k]->lit) == 0)
            return boolean(1);
    return boolean(0);
}

static struct devsel_value eval(const struct expr *x, const struct devsel_device *d)
{
    const struct devsel_value *v;
    switch (x->op) {
    case X_AND:
    case X_OR:
        return logic(x, d);
    case X_NOT: {
        struct devsel_value a = eval(x->a, d);
        return a.kind == DEVSEL_BOOL ? boolean(!a.i) : none;
    }
    case X_DRIVER:
        return d->driver != NULL ? (struct devsel_value){.kind = DEVSEL_STRING, .s = d->driver} : none;
    case X_ATTR:
    case X_CAP:
        v = x->op == X_ATTR ? lookup(d->attrs, d->nattrs, x->domain, x->id, d->driver)
                            : lookup(d->capacity, d->ncapacity, x->domain, x->id, d->driver);
        return v != NULL ? *v : none;
    case X_LIT:
        return x->lit;
    case X_METHOD:
        return method(x, d);
    case X_HAS:
        v = x->a->op == X_ATTR ? lookup(d->attrs, d->nattrs, x->a->domain, x->a->id, d->driver)
                               : lookup(d->capacity, d->ncapacity, x->a->domain, x->a->id, d->driver);
        return boolean(v != NULL);
    case X_IN:
        return member(x, d);
    default: {
        struct devsel_value a = eval(x->a, d), b = eval(x->b, d);
        return compare(x->op, &a, &b);
    }
    }
}

int devsel_match(const struct devsel *s, const struct devsel_device *d)
{
    if (s->root == NULL)
        return s->driver == NULL || util_streq(s->driver, d->driver);
    struct devsel_value v = eval(s->root, d);
    return v.kind == DEVSEL_BOOL && v.i == 1;
}
