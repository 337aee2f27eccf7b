#include "AllocatorSettings.h"

/*
 * jemalloc reads this definition of its `malloc_conf` (the library's own is weak) when it starts, before main.
 *
 * oversize_threshold:0 — jemalloc serves allocations of 8 MiB and more from an arena of their own that returns
 * their pages to the system as soon as they are freed, so each of ONNX Runtime's large activation buffers was
 * faulted in afresh at every model run (it allocates them per run; its own arena is off so that a long-running
 * worker's memory goes back between pages). With the threshold at 0 they live in the thread's arena like other
 * blocks and are reused.
 * background_thread:true, dirty_decay_ms:1000, muzzy_decay_ms:0 — freed pages go back to the system a second after
 * they are last used, by jemalloc's own thread, rather than piling up through a long page (with the threshold
 * alone a DocBank page peaked at 895 MB against 586 MB before).
 *
 * Measured with `/usr/bin/time ocrfarm ocr --jobs 1 --engine neural` (user+system CPU, page faults, peak RSS):
 *   11 SROIE receipts:   50.4 s (18.6 s system), 5.94 M faults, 659 MB  ->  32.0 s (2.6 s system), 1.11 M, 862 MB
 *   one DocBank page:    21.7 s (8.1 s system),  -                586 MB  ->  14.9 s (1.6 s system), 0.78 M, 690 MB
 *   Tesseract, 6 synthetic pages: 11.1 s, 178 k faults, 133 MB  ->  10.8 s, 90 k, 128 MB
 * with the same text. MALLOC_CONF in the environment still overrides any of these.
 */
const char *malloc_conf = "oversize_threshold:0,background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0";
