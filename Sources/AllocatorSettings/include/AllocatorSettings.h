#ifndef OCRFARM_ALLOCATOR_SETTINGS_H
#define OCRFARM_ALLOCATOR_SETTINGS_H

/// The jemalloc options ocrfarm starts with (jemalloc's `malloc_conf`; MALLOC_CONF in the environment still
/// overrides them).
const char *ocrfarm_malloc_conf(void);

#endif
