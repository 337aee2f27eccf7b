// Only the introspection entry points are used; linking the library makes jemalloc the process allocator.
#include <stddef.h>
int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);
