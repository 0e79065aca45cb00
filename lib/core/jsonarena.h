/*
 * jsonarena: the jansson values of one request in one block of memory.
 *
 * A RayCluster review builds and frees some 500 jansson values (its tree, the
 * patch, the answer): malloc and free were a third of its instructions.
 * Installed (jsonarena_install(), once, before the threads start), jansson
 * allocates through this module: between jsonarena_begin() and
 * jsonarena_end() on a thread, in that thread's obstack (glibc's, a pointer
 * bump), and otherwise with malloc. Freeing memory of the arena is nothing;
 * anything else goes to free(). jsonarena_end() takes back the whole arena
 * at once and keeps its first chunk for the next request.
 *
 * The contract of a scope: every jansson value made in it is released in it
 * (json_decref), and no text jansson allocates (json_dumps) leaves it: take
 * text with jsonarena_dumps(), which returns libc memory in any case. Values
 * made before the scope may be read, kept and released in it. Scopes nest;
 * the outermost ends the arena. Not installed, begin and end do nothing and
 * jansson uses malloc: the unit tests and the fuzzers (AddressSanitizer)
 * run so.
 */
#ifndef RAYGATE_JSONARENA_H
#define RAYGATE_JSONARENA_H

#include <stddef.h>

#include <jansson.h>

/* Routes jansson's allocations through this module (json_set_alloc_funcs). Once, before any other thread starts. */
void jsonarena_install(void);

/* Opens a scope on the calling thread: jansson allocates in its arena until the matching jsonarena_end(). */
void jsonarena_begin(void);

/* Closes the scope; the outermost one takes the arena's memory back (see the contract above). */
void jsonarena_end(void);

/*
 * json_dumps(v, flags) into a new string of libc memory (caller frees with
 * free()), its length in *len (may be NULL). NULL when jansson refuses
 * (as json_dumps).
 */
char *jsonarena_dumps(const json_t *v, size_t flags, size_t *len);

#endif
