#ifndef OCRFARM_ALLOCATOR_SETTINGS_H
#define OCRFARM_ALLOCATOR_SETTINGS_H

/// The jemalloc options ocrfarm starts with (jemalloc's `malloc_conf`; MALLOC_CONF in the environment still
/// overrides them). jemalloc reads the definition; nothing else needs to.
extern const char *malloc_conf;

#endif
