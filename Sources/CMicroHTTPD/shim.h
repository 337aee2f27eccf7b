// microhttpd.h wants the socket and integer types declared before it.
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

// MHD_get_connection_info is variadic, which Swift cannot call: the client's address through a plain function.
static inline const struct sockaddr *ocrfarm_mhd_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info ? info->client_addr : (const struct sockaddr *)0;
}
