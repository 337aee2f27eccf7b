// libcrypto (OpenSSL 3): only the EVP digest interface; the low-level SHA256_* calls are deprecated in 3.0.
#include <openssl/evp.h>
