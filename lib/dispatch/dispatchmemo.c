#include "dispatchmemo.h"

#include "util.h"

static const char *meta_str(const json_t *obj, const char *field)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
}

char *dispatch_memo_key(const json_t *obj, char *out, size_t size)
{
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const char *ns = meta_str(obj, "namespace"), *name = meta_str(obj, "name");
    util_format(out, size, "%s %s/%s", kind != NULL ? kind : "?", ns != NULL ? ns : "", name != NULL ? name : "");
    return out;
}

/* Deletes from memo (modified) every key not in keep (a set: a JSON object). */
static void keep_only(json_t *memo, const json_t *keep)
{
    const char *key;
    json_t *val;
    void *tmp;
    json_object_foreach_safe(memo, tmp, key, val)
    {
        if (json_object_get(keep, key) == NULL)
            json_object_del(memo, key);
    }
}

void dispatch_memo_prune(json_t *told, json_t *warned, const json_t *objects)
{
    json_t *uids = json_object(), *keys = json_object();
    size_t i;
    const json_t *obj;
    json_array_foreach(objects, i, obj)
    {
        const char *uid = meta_str(obj, "uid");
        char key[DISPATCH_MEMO_KEY_MAX];
        if (uid != NULL)
            json_object_set_new(uids, uid, json_true());
        json_object_set_new(keys, dispatch_memo_key(obj, key, sizeof(key)), json_true());
    }
    if (told != NULL)
        keep_only(told, uids);
    if (warned != NULL)
        keep_only(warned, keys);
    json_decref(uids);
    json_decref(keys);
}
