#include "devselparse.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Deeper nesting is an error: the parser recurses, and real selectors nest a few levels. */
#define MAX_DEPTH 64

enum tok_kind {
    T_EOF,
    T_IDENT,
    T_STRING,
    T_INT,
    T_UINT,
    T_DOUBLE,
    T_OP, /* punctuation and operators: text in op[] */
};

struct tok {
    int kind;
    char op[3];
    size_t start, end;
    char *text; /* owned: an identifier's name, a string's value */
    int64_t i;
};

struct lexer {
    const char *s;
    size_t len, pos;
    struct tok *toks;
    size_t n, cap;
    struct error *err;
};

struct parser {
    const char *s;
    struct tok *t;
    size_t pos;
    int depth;
    struct error *err;
};

static void toks_free(struct tok *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(t[i].text);
    free(t);
}

static struct tok *push(struct lexer *lx, int kind, size_t start)
{
    if (lx->n == lx->cap) {
        lx->cap = lx->cap ? lx->cap * 2 : 16;
        lx->toks = util_realloc(lx->toks, lx->cap * sizeof(*lx->toks));
    }
    struct tok *t = &lx->toks[lx->n++];
    memset(t, 0, sizeof(*t));
    t->kind = kind;
    t->start = start;
    t->end = lx->pos;
    return t;
}

/* One escape after a backslash at lx->pos; appends its byte to b. CEL's \u and octal forms are not taken. */
static int lex_escape(struct lexer *lx, struct util_buf *b)
{
    static const char from[] = "\\\"'`?abfnrtv", to[] = "\\\"'`?\a\b\f\n\r\t\v";
    char c = lx->pos < lx->len ? lx->s[lx->pos] : '\0';
    const char *p = c ? strchr(from, c) : NULL;
    if (p != NULL) {
        util_buf_append(b, &to[p - from], 1);
        lx->pos++;
        return 0;
    }
    if ((c == 'x' || c == 'X') && lx->pos + 2 < lx->len && isxdigit((unsigned char)lx->s[lx->pos + 1]) &&
        isxdigit((unsigned char)lx->s[lx->pos + 2])) {
        char hex[3] = {lx->s[lx->pos + 1], lx->s[lx->pos + 2], '\0'};
        char byte = (char)strtol(hex, NULL, 16);
        util_buf_append(b, &byte, 1);
        lx->pos += 3;
        return 0;
    }
    error_setf(lx->err, "unsupported escape at offset %zu", lx->pos - 1);
    return -1;
}

static int lex_string(struct lexer *lx)
{
    size_t start = lx->pos;
    char quote = lx->s[lx->pos++];
    if (lx->pos + 1 < lx->len && lx->s[lx->pos] == quote && lx->s[lx->pos + 1] == quote) {
        error_setf(lx->err, "triple-quoted string at offset %zu", start);
        return -1;
    }
    struct util_buf b = {0};
    while (lx->pos < lx->len && lx->s[lx->pos] != quote && lx->s[lx->pos] != '\n') {
        if (lx->s[lx->pos] != '\\') {
            util_buf_append(&b, &lx->s[lx->pos++], 1);
        } else {
            lx->pos++;
            if (lex_escape(lx, &b) != 0) {
                util_buf_finish(&b);
                return -1;
            }
        }
    }
    if (lx->pos >= lx->len || lx->s[lx->pos] != quote) {
        util_buf_finish(&b);
        error_setf(lx->err, "unterminated string at offset %zu", start);
        return -1;
    }
    lx->pos++;
    push(lx, T_STRING, start)->text = util_buf_take(&b);
    return 0;
}

static int lex_number(struct lexer *lx)
{
    size_t start = lx->pos;
    const char *s = lx->s;
    int hex = s[start] == '0' && start + 1 < lx->len && (s[start + 1] == 'x' || s[start + 1] == 'X');
    int floating = 0;
    lx->pos += hex ? 2 : 0;
    while (lx->pos < lx->len && (hex ? isxdigit((unsigned char)s[lx->pos]) : isdigit((unsigned char)s[lx->pos])))
        lx->pos++;
    if (!hex && lx->pos + 1 < lx->len && s[lx->pos] == '.' && isdigit((unsigned char)s[lx->pos + 1])) {
        floating = 1;
        for (lx->pos++; lx->pos < lx->len && isdigit((unsigned char)s[lx->pos]);)
            lx->pos++;
    }
    if (!hex && lx->pos < lx->len && (s[lx->pos] == 'e' || s[lx->pos] == 'E')) {
        floating = 1;
        lx->pos += lx->pos + 1 < lx->len && (s[lx->pos + 1] == '+' || s[lx->pos + 1] == '-') ? 2 : 1;
        while (lx->pos < lx->len && isdigit((unsigned char)s[lx->pos]))
            lx->pos++;
    }
    if (floating) {
        push(lx, T_DOUBLE, start);
        return 0;
    }
    char digits[32];
    size_t n = lx->pos - start - (hex ? 2 : 0);
    if (n == 0 || n >= sizeof(digits)) {
        error_setf(lx->err, "invalid number at offset %zu", start);
        return -1;
    }
    memcpy(digits, s + start + (hex ? 2 : 0), n);
    digits[n] = '\0';
    errno = 0;
    unsigned long long v = strtoull(digits, NULL, hex ? 16 : 10);
    int uint = lx->pos < lx->len && (s[lx->pos] == 'u' || s[lx->pos] == 'U');
    lx->pos += uint;
    /* INT64_MAX + 1 only right after a '-': "-9223372036854775808" is an int, the parser folds the sign in. */
    int negated = lx->n > 0 && lx->toks[lx->n - 1].kind == T_OP && strcmp(lx->toks[lx->n - 1].op, "-") == 0;
    unsigned long long limit = uint ? UINT64_MAX : (unsigned long long)INT64_MAX + (negated ? 1 : 0);
    if (errno == ERANGE || v > limit) {
        error_setf(lx->err, "number out of range at offset %zu", start);
        return -1;
    }
    push(lx, uint ? T_UINT : T_INT, start)->i = (int64_t)v;
    return 0;
}

static int lex_op(struct lexer *lx)
{
    static const char *const two[] = {"&&", "||", "==", "!=", "<=", ">="};
    static const char one[] = "()[]{}.,?:!-+*/%<>";
    size_t start = lx->pos;
    for (size_t k = 0; k < sizeof(two) / sizeof(two[0]); k++) {
        if (lx->pos + 1 < lx->len && strncmp(lx->s + lx->pos, two[k], 2) == 0) {
            lx->pos += 2;
            memcpy(push(lx, T_OP, start)->op, two[k], 3);
            return 0;
        }
    }
    if (lx->s[lx->pos] != '\0' && strchr(one, lx->s[lx->pos]) != NULL) {
        lx->pos++;
        push(lx, T_OP, start)->op[0] = lx->s[start];
        return 0;
    }
    error_setf(lx->err, "unexpected character at offset %zu", start);
    return -1;
}

/* Tokens of s[0..len), ending with T_EOF; NULL with err when the text does not lex. */
static struct tok *lex(const char *s, size_t len, struct error *err)
{
    struct lexer lx = {.s = s, .len = len, .err = err};
    while (1) {
        while (lx.pos < len && isspace((unsigned char)s[lx.pos]))
            lx.pos++;
        if (lx.pos >= len)
            break;
        unsigned char c = (unsigned char)s[lx.pos];
        int rc = 0;
        if (c == '"' || c == '\'') {
            rc = lex_string(&lx);
        } else if (isdigit(c)) {
            rc = lex_number(&lx);
        } else if (isalpha(c) || c == '_') {
            size_t start = lx.pos;
            while (lx.pos < len && (isalnum((unsigned char)s[lx.pos]) || s[lx.pos] == '_'))
                lx.pos++;
            push(&lx, T_IDENT, start)->text = util_memdup(s + start, lx.pos - start);
        } else {
            rc = lex_op(&lx);
        }
        if (rc != 0) {
            toks_free(lx.toks, lx.n);
            return NULL;
        }
    }
    push(&lx, T_EOF, len);
    return lx.toks;
}

static struct devselparse_node *node_new(int op, size_t start, size_t end)
{
    struct devselparse_node *n = util_calloc(1, sizeof(*n));
    n->op = op;
    n->start = start;
    n->end = end;
    return n;
}

static void node_add(struct devselparse_node *n, struct devselparse_node *kid)
{
    n->kid = util_realloc(n->kid, (n->nkid + 1) * sizeof(*n->kid));
    n->kid[n->nkid++] = kid;
    if (kid != NULL && kid->end > n->end)
        n->end = kid->end;
}

static struct devselparse_node *binary(int op, struct devselparse_node *a, struct devselparse_node *b)
{
    struct devselparse_node *n = node_new(op, a->start, a->end);
    node_add(n, a);
    node_add(n, b);
    return n;
}

void devselparse_free(struct devselparse_node *n)
{
    if (n == NULL)
        return;
    for (size_t k = 0; k < n->nkid; k++)
        devselparse_free(n->kid[k]);
    free(n->kid);
    free(n->text);
    free(n);
}

static int is_op(const struct parser *p, const char *op)
{
    return p->t[p->pos].kind == T_OP && strcmp(p->t[p->pos].op, op) == 0;
}

static int is_word(const struct parser *p, const char *w)
{
    return p->t[p->pos].kind == T_IDENT && strcmp(p->t[p->pos].text, w) == 0;
}

static int expect(struct parser *p, const char *op)
{
    if (is_op(p, op)) {
        p->pos++;
        return 0;
    }
    error_setf(p->err, "expected '%s' at offset %zu", op, p->t[p->pos].start);
    return -1;
}

static struct devselparse_node *parse_expr(struct parser *p);

/* A comma-separated list up to close (already past the opening bracket), appended to n's kids. */
static int parse_args(struct parser *p, struct devselparse_node *n, const char *close)
{
    while (!is_op(p, close)) {
        struct devselparse_node *a = parse_expr(p);
        if (a == NULL)
            return -1;
        node_add(n, a);
        if (!is_op(p, ","))
            break;
        p->pos++;
    }
    n->end = p->t[p->pos].end;
    return expect(p, close);
}

static struct devselparse_node *parse_literal(struct parser *p)
{
    const struct tok *t = &p->t[p->pos];
    static const int ops[] = {
        [T_STRING] = DEVSELPARSE_STRING, [T_INT] = DEVSELPARSE_INT, [T_UINT] = DEVSELPARSE_UINT, [T_DOUBLE] = DEVSELPARSE_DOUBLE};
    struct devselparse_node *n = node_new(ops[t->kind], t->start, t->end);
    n->text = util_strdup(t->text);
    n->i = t->i;
    p->pos++;
    return n;
}

static struct devselparse_node *parse_primary(struct parser *p)
{
    const struct tok *t = &p->t[p->pos];
    struct devselparse_node *n = NULL;
    if (t->kind == T_STRING || t->kind == T_INT || t->kind == T_UINT || t->kind == T_DOUBLE)
        return parse_literal(p);
    if (t->kind == T_IDENT) {
        int lit = is_word(p, "true") || is_word(p, "false") ? DEVSELPARSE_BOOL : is_word(p, "null") ? DEVSELPARSE_NULL : -1;
        n = node_new(lit >= 0 ? lit : DEVSELPARSE_IDENT, t->start, t->end);
        n->i = is_word(p, "true");
        n->text = lit >= 0 ? NULL : util_strdup(t->text);
        p->pos++;
        if (lit < 0 && is_op(p, "(")) {
            n->op = DEVSELPARSE_CALL;
            node_add(n, NULL);
            p->pos++;
            if (parse_args(p, n, ")") != 0)
                goto fail;
        }
        return n;
    }
    if (is_op(p, "(")) {
        p->pos++;
        n = parse_expr(p);
        if (n == NULL || expect(p, ")") != 0)
            goto fail;
        return n;
    }
    if (is_op(p, "[")) {
        n = node_new(DEVSELPARSE_LIST, t->start, t->end);
        p->pos++;
        if (parse_args(p, n, "]") != 0)
            goto fail;
        return n;
    }
    error_setf(p->err, "unexpected %s at offset %zu", t->kind == T_EOF ? "end" : "token", t->start);
fail:
    devselparse_free(n);
    return NULL;
}

/* primary followed by .name, .name(args) and [index]. */
static struct devselparse_node *parse_member(struct parser *p)
{
    struct devselparse_node *n = parse_primary(p);
    while (n != NULL && (is_op(p, ".") || is_op(p, "["))) {
        struct devselparse_node *m;
        if (is_op(p, "[")) {
            p->pos++;
            m = node_new(DEVSELPARSE_INDEX, n->start, n->end);
            node_add(m, n);
            n = m;
            struct devselparse_node *idx = parse_expr(p);
            if (idx == NULL)
                goto fail;
            node_add(n, idx);
            n->end = p->t[p->pos].end;
            if (expect(p, "]") != 0)
                goto fail;
            continue;
        }
        p->pos++;
        if (p->t[p->pos].kind != T_IDENT) {
            error_setf(p->err, "expected a field name at offset %zu", p->t[p->pos].start);
            goto fail;
        }
        m = node_new(DEVSELPARSE_MEMBER, n->start, p->t[p->pos].end);
        m->text = util_strdup(p->t[p->pos].text);
        node_add(m, n);
        n = m;
        p->pos++;
        if (is_op(p, "(")) {
            n->op = DEVSELPARSE_CALL;
            p->pos++;
            if (parse_args(p, n, ")") != 0)
                goto fail;
        }
    }
    return n;
fail:
    devselparse_free(n);
    return NULL;
}

static struct devselparse_node *parse_unary(struct parser *p)
{
    if (!is_op(p, "!") && !is_op(p, "-"))
        return parse_member(p);
    size_t start = p->t[p->pos].start;
    int op = is_op(p, "!") ? DEVSELPARSE_NOT : DEVSELPARSE_NEG;
    if (++p->depth > MAX_DEPTH) {
        error_setf(p->err, "nested deeper than %d at offset %zu", MAX_DEPTH, start);
        return NULL;
    }
    p->pos++;
    struct devselparse_node *kid = parse_unary(p);
    p->depth--;
    if (kid == NULL)
        return NULL;
    if (op == DEVSELPARSE_NEG && (kid->op == DEVSELPARSE_INT || kid->op == DEVSELPARSE_DOUBLE)) {
        kid->i = (int64_t)(0 - (uint64_t)kid->i); /* -9223372036854775808 stays exact */
        kid->start = start;
        return kid;
    }
    struct devselparse_node *n = node_new(op, start, kid->end);
    node_add(n, kid);
    return n;
}

/* One level of left-associative binary operators: ops[k] (NULL-terminated) makes codes[k]. */
static struct devselparse_node *parse_level(struct parser *p, int level);

static struct devselparse_node *parse_operand(struct parser *p, int level)
{
    return level == 0 ? parse_unary(p) : parse_level(p, level - 1);
}

static struct devselparse_node *parse_level(struct parser *p, int level)
{
    /* From the tightest binding: multiplicative, additive, relations, &&, ||. */
    static const char *const ops[][7] = {
        {"*", "/", "%", NULL}, {"+", "-", NULL}, {"==", "!=", "<", "<=", ">", ">=", NULL}, {"&&", NULL}, {"||", NULL}};
    static const int codes[][6] = {{DEVSELPARSE_ARITH, DEVSELPARSE_ARITH, DEVSELPARSE_ARITH},
                                   {DEVSELPARSE_ARITH, DEVSELPARSE_ARITH},
                                   {DEVSELPARSE_EQ, DEVSELPARSE_NE, DEVSELPARSE_LT, DEVSELPARSE_LE, DEVSELPARSE_GT, DEVSELPARSE_GE},
                                   {DEVSELPARSE_AND},
                                   {DEVSELPARSE_OR}};
    struct devselparse_node *n = parse_operand(p, level);
    while (n != NULL) {
        int code = -1;
        for (size_t k = 0; ops[level][k] != NULL && code < 0; k++)
            code = is_op(p, ops[level][k]) ? codes[level][k] : -1;
        if (code < 0 && level == 2 && is_word(p, "in"))
            code = DEVSELPARSE_IN;
        if (code < 0)
            break;
        p->pos++;
        struct devselparse_node *b = parse_operand(p, level);
        if (b == NULL) {
            devselparse_free(n);
            return NULL;
        }
        n = binary(code, n, b);
    }
    return n;
}

static struct devselparse_node *parse_expr(struct parser *p)
{
    if (++p->depth > MAX_DEPTH) {
        error_setf(p->err, "nested deeper than %d at offset %zu", MAX_DEPTH, p->t[p->pos].start);
        return NULL;
    }
    struct devselparse_node *n = parse_level(p, 4);
    if (n != NULL && is_op(p, "?")) {
        p->pos++;
        struct devselparse_node *c = node_new(DEVSELPARSE_COND, n->start, n->end);
        node_add(c, n);
        n = c;
        struct devselparse_node *yes = parse_expr(p);
        if (yes != NULL)
            node_add(n, yes);
        struct devselparse_node *no = yes != NULL && expect(p, ":") == 0 ? parse_expr(p) : NULL;
        if (no == NULL) {
            devselparse_free(n);
            n = NULL;
        } else {
            node_add(n, no);
        }
    }
    p->depth--;
    return n;
}

struct devselparse_node *devselparse_parse(const char *expr, size_t len, struct error *err)
{
    struct tok *t = lex(expr, len, err);
    if (t == NULL)
        return NULL;
    struct parser p = {.s = expr, .t = t, .err = err};
    struct devselparse_node *n = parse_expr(&p);
    if (n != NULL && p.t[p.pos].kind != T_EOF) {
        error_setf(err, "unexpected token at offset %zu", p.t[p.pos].start);
        devselparse_free(n);
        n = NULL;
    }
    size_t ntok = 0;
    while (t[ntok].kind != T_EOF)
        ntok++;
    toks_free(t, ntok + 1);
    return n;
}

size_t devselparse_conjuncts(const char *expr, size_t len, size_t *starts, size_t *ends, size_t max)
{
    struct tok *t = lex(expr, len, NULL);
    if (t == NULL)
        return 0;
    size_t n = 0, k, from = 0;
    int depth = 0, ok = max > 0;
    for (k = 0; ok; k++) {
        int top = depth == 0 && t[k].kind == T_OP;
        if (t[k].kind == T_EOF || (top && strcmp(t[k].op, "&&") == 0)) {
            ok = n < max;
            if (ok) {
                starts[n] = t[from].start;
                ends[n++] = k > from ? t[k - 1].end : t[from].start;
            }
            from = k + 1;
            if (t[k].kind == T_EOF)
                break;
        } else if (top && (strcmp(t[k].op, "||") == 0 || strcmp(t[k].op, "?") == 0)) {
            ok = 0;
        } else if (t[k].kind == T_OP && strchr("([{", t[k].op[0]) != NULL && t[k].op[1] == '\0') {
            depth++;
        } else if (t[k].kind == T_OP && strchr(")]}", t[k].op[0]) != NULL && t[k].op[1] == '\0') {
            depth--;
        }
    }
    while (t[k].kind != T_EOF)
        k++;
    toks_free(t, k + 1);
    return ok ? n : 0;
}
