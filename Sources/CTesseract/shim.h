// Leptonica first, so that `struct Pix` is complete and imports as UnsafeMutablePointer<Pix>, not OpaquePointer.
#include <leptonica/allheaders.h>
#include <tesseract/capi.h>
