/*
 * jsonpatch: RFC 6902 JSON Patch documents and RFC 6901 JSON Pointers, and
 * RFC 7386 JSON merge patches (what the controller sends to the apiserver for
 * objects it owns fields of).
 *
 * Building: a patch is a JSON array of operation objects; the helpers append
 * operations and escape pointer tokens ("~" is "~0", "/" is "~1"). Applying
 * (add, remove, replace, move, copy, test; "-" appends to an array) is used by
 * the tests and fuzzers to check that a patch turns its input into the
 * expected object, so it follows the RFC strictly.
 */
#ifndef RAYGATE_JSONPATCH_H
#define RAYGATE_JSONPATCH_H

#include <stddef.h>

#include <jansson.h>

#include "error.h"

/* Returns a new (malloc'd) string: base + "/" + token escaped; caller frees. */
char *jsonpatch_pointer_join(const char *base, const char *token);

/* Returns a new (malloc'd) string: base + "/" + index in decimal; caller frees. */
char *jsonpatch_pointer_index(const char *base, size_t index);

/*
 * Appends {"op": op, "path": path, "value": value} to patch (borrowed, a JSON
 * array). value is stolen; pass NULL for operations without one ("remove").
 * op and path must be UTF-8 (they are not checked again): an operation's name,
 * and a pointer joined from jansson's strings (UTF-8 already) and ASCII.
 */
void jsonpatch_append_new(json_t *patch, const char *op, const char *path, json_t *value);

/*
 * Resolves pointer in doc (borrowed). Returns a borrowed reference into doc, or
 * NULL when the pointer is malformed or names nothing.
 */
json_t *jsonpatch_get(const json_t *doc, const char *pointer);

/*
 * Applies patch (borrowed, a JSON array of operations) to a copy of doc
 * (borrowed). Returns the patched document as a new reference, or NULL with
 * err when an operation is malformed or fails (a "test" that does not match,
 * a path that does not exist).
 */
json_t *jsonpatch_apply(const json_t *doc, const json_t *patch, struct error *err);

/*
 * obj[key] as an object of obj's own (borrowed), replacing an absent, null or
 * ill-typed member by {}: obj is a shallow copy being mutated, and so is the
 * member returned. The copy shares every subtree it does not change with the
 * original (copy on write), so that jsonpatch_diff() finds the unchanged parts
 * equal by pointer instead of comparing them value by value.
 */
json_t *jsonpatch_own_object(json_t *obj, const char *key);

/*
 * Returns a new patch (JSON array, possibly empty) that turns from into to
 * (both borrowed): object members are added, removed or recursed into in key
 * order, arrays of equal length element by element, anything else replaced.
 */
json_t *jsonpatch_diff(const json_t *from, const json_t *to);

/*
 * Returns a new RFC 7386 merge patch (a JSON object, empty when nothing
 * differs) that turns the object from into the object to (both borrowed):
 * members only in from become null, members only in to are copied, objects on
 * both sides are recursed into, anything else that differs is replaced whole
 * (arrays included, as merge patches do). A null inside to cannot be expressed
 * and is not supported. from may be NULL (everything in to is added).
 */
json_t *jsonpatch_merge_diff(const json_t *from, const json_t *to);

/*
 * Applies the RFC 7386 merge patch (borrowed) to a copy of doc (borrowed, may
 * be NULL) and returns the result as a new reference.
 */
json_t *jsonpatch_merge_apply(const json_t *doc, const json_t *patch);

/*
 * The JSON merge patch (new) that does what first then second (both
 * borrowed) do: second's members over first's, objects composed member by
 * member. (One case it cannot say: first deleting a member that second sets
 * to an object; the object is then merged into the target's old one.)
 */
json_t *jsonpatch_merge_compose(const json_t *first, const json_t *second);

#endif
