#include <leptonica/allheaders.h>
