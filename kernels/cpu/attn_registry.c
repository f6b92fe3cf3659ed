/* attn_registry.c: the list of attention implementations the harness and
 * the tests can pick by name, and the status strings. A new variant is one
 * file defining kern_attn_impl_NAME plus one X(NAME) line below. */
#include <string.h>

#include "kern_internal.h"

#define KERN_ATTN_IMPLS(X) \
    X(ref)                 \
    X(flash)

#define KERN_ATTN_DECLARE(n) extern const struct kern_attn_impl kern_attn_impl_##n;
KERN_ATTN_IMPLS(KERN_ATTN_DECLARE)
#undef KERN_ATTN_DECLARE

static const struct kern_attn_impl *const attn_impls[] = {
#define KERN_ATTN_ENTRY(n) &kern_attn_impl_##n,
    KERN_ATTN_IMPLS(KERN_ATTN_ENTRY)
#undef KERN_ATTN_ENTRY
};

#define ATTN_IMPL_COUNT (sizeof attn_impls / sizeof attn_impls[0])

const struct kern_attn_impl *kern_attn_find(const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < ATTN_IMPL_COUNT; i++)
        if (strcmp(attn_impls[i]->name, name) == 0) return attn_impls[i];
    return NULL;
}

size_t kern_attn_impl_count(void) { return ATTN_IMPL_COUNT; }

const struct kern_attn_impl *kern_attn_impl_at(size_t i)
{
    return i < ATTN_IMPL_COUNT ? attn_impls[i] : NULL;
}

const char *kern_status_str(kern_status s)
{
    switch (s) {
    case KERN_OK: return "ok";
    case KERN_EINVAL: return "invalid shape, pointer or option";
    case KERN_ENOMEM: return "out of memory";
    }
    return "unknown status";
}
