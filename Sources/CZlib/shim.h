// zlib: the one-shot compress2() and uncompress(), for the page models the store keeps compressed.
#include <zlib.h>
