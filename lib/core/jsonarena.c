#include "jsonarena.h"

#include <obstack.h>
#include <stdint.h>
#include <stdlib.h>

#include "util.h"

/* The first chunk, kept from one scope to the next: a RayCluster review takes about 30 KB. */
#define ARENA_CHUNK (64 * 1024)
/* Each further chunk twice the last, up to this: a body of 100,000 values takes a dozen chunks, not a thousand. */
#define ARENA_CHUNK_MAX (64 * 1024 * 1024)

/* One thread's arena: made at its first scope, kept for the thread's life. */
struct arena {
    struct obstack ob;
    char *base; /* the arena's first object: freeing it frees the rest and keeps its chunk */
    int depth;  /* open scopes: jansson allocates here while it is above 0 */
    int ready;  /* ob is initialised */
};

static _Thread_local struct arena arena;

static void *arena_malloc(size_t n)
{
    if (arena.depth == 0)
        return malloc(n);
    /* A new chunk is coming: twice the last, so that in_arena() walks few. */
    if (obstack_room(&arena.ob) < n && obstack_chunk_size(&arena.ob) < ARENA_CHUNK_MAX)
        obstack_chunk_size(&arena.ob) *= 2;
    return obstack_alloc(&arena.ob, n);
}

/* Whether p lies in one of the arena's chunks (what glibc's obstack_free walks too; one chunk, mostly). */
static int in_arena(const void *p)
{
    uintptr_t at = (uintptr_t)p;
    for (const struct _obstack_chunk *c = arena.ready ? arena.ob.chunk : NULL; c != NULL; c = c->prev)
        if (at >= (uintptr_t)c && at < (uintptr_t)c->limit)
            return 1;
    return 0;
}

static void arena_free(void *p)
{
    if (p == NULL || in_arena(p))
        return; /* the arena's memory comes back at the scope's end */
    free(p);
}

void jsonarena_install(void)
{
    json_set_alloc_funcs(arena_malloc, arena_free);
}

void jsonarena_begin(void)
{
    if (!arena.ready) {
        obstack_specify_allocation(&arena.ob, ARENA_CHUNK, 0, util_malloc, free);
        arena.base = obstack_alloc(&arena.ob, 1);
        arena.ready = 1;
    }
    arena.depth++;
}

void jsonarena_end(void)
{
    if (arena.depth == 0 || --arena.depth > 0)
        return;
    obstack_free(&arena.ob, arena.base); /* back to the first chunk */
    obstack_chunk_size(&arena.ob) = ARENA_CHUNK;
    arena.base = obstack_alloc(&arena.ob, 1);
}

static int append(const char *buffer, size_t size, void *data)
{
    util_buf_append(data, buffer, size);
    return 0;
}

char *jsonarena_dumps(const json_t *v, size_t flags, size_t *len)
{
    struct util_buf b = {0};
    if (v == NULL || json_dump_callback(v, append, &b, flags) != 0) {
        util_buf_finish(&b);
        return NULL;
    }
    if (len != NULL)
        *len = b.len;
    return util_buf_take(&b);
}
