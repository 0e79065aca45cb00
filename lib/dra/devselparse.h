/*
 * devselparse: the lexer and recursive-descent parser of devsel (devsel.h).
 *
 * It parses more of CEL than devsel evaluates (identifiers, member access,
 * indexing, calls and methods, lists, `in`, arithmetic, `?:`), so that devsel
 * can name the part it does not evaluate, and keep a `device.driver == "x"`
 * conjunct beside it. The tree is syntax only: devsel decides what it means.
 * Maps, bytes, raw and triple-quoted strings and macros' own syntax are not
 * parsed (an error). Pure.
 */
#ifndef RAYGATE_DEVSELPARSE_H
#define RAYGATE_DEVSELPARSE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

enum devselparse_op {
    DEVSELPARSE_IDENT,  /* text */
    DEVSELPARSE_STRING, /* text: the value, escapes resolved */
    DEVSELPARSE_INT,    /* i */
    DEVSELPARSE_UINT,   /* i (12u) */
    DEVSELPARSE_DOUBLE, /* a floating literal: not kept */
    DEVSELPARSE_BOOL,   /* i: 0 or 1 */
    DEVSELPARSE_NULL,
    DEVSELPARSE_MEMBER, /* kid[0].text */
    DEVSELPARSE_INDEX,  /* kid[0][kid[1]] */
    DEVSELPARSE_CALL,   /* text(kid[1..]) with kid[0] NULL, or the method kid[0].text(kid[1..]) */
    DEVSELPARSE_LIST,   /* [kid[0], ...] */
    DEVSELPARSE_NOT,    /* !kid[0] */
    DEVSELPARSE_NEG,    /* -kid[0] */
    DEVSELPARSE_AND,    /* binary operators: kid[0] op kid[1] */
    DEVSELPARSE_OR,
    DEVSELPARSE_EQ,
    DEVSELPARSE_NE,
    DEVSELPARSE_LT,
    DEVSELPARSE_LE,
    DEVSELPARSE_GT,
    DEVSELPARSE_GE,
    DEVSELPARSE_IN,
    DEVSELPARSE_ARITH, /* + - * / %: one kind, since devsel evaluates none */
    DEVSELPARSE_COND,  /* kid[0] ? kid[1] : kid[2] */
};

struct devselparse_node {
    int op;     /* enum devselparse_op */
    char *text; /* owned, or NULL */
    int64_t i;
    struct devselparse_node **kid; /* owned; an entry may be NULL (a call's absent target) */
    size_t nkid;
    size_t start, end; /* the node's text: expr[start..end) of the expression parsed */
};

/*
 * Parses expr[0..len) (borrowed). Returns a new tree (devselparse_free), or
 * NULL with err ("expected ')' at offset 12", "unterminated string at offset 3").
 * Nesting deeper than 64 is an error.
 */
struct devselparse_node *devselparse_parse(const char *expr, size_t len, struct error *err);

/* Frees n and its kids; n may be NULL. */
void devselparse_free(struct devselparse_node *n);

/*
 * The top-level conjuncts of expr[0..len) found by the lexer alone, for an
 * expression that does not parse as a whole: the spans between `&&` at
 * bracket depth 0. Fills starts[] and ends[] (max entries each) and returns
 * how many, or 0 when the lexer fails, a `||` or `?` stands at depth 0 (then
 * no span is a conjunct), or there are more than max.
 */
size_t devselparse_conjuncts(const char *expr, size_t len, size_t *starts, size_t *ends, size_t max);

#endif
