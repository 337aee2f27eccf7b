// libcrypto (OpenSSL 3): the EVP digest interface and the one-shot HMAC(); the low-level SHA256_* calls and the
// HMAC_CTX functions are deprecated in 3.0.
#include <openssl/evp.h>
#include <openssl/hmac.h>
