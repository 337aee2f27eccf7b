import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#endif

/// A request as the handler sees it: the method and the path, without the query.
public struct HTTPRequest: Sendable {
    public let method: String
    public let path: String
    /// The query's arguments (`?q=word&page=2`), percent-decoded by libmicrohttpd; the last of a repeated name wins.
    public let query: [String: String]

    public init(method: String, path: String, query: [String: String] = [:]) {
        self.method = method
        self.path = path
        self.query = query
    }
}

/// What the handler answers.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var body: [UInt8]
    public var headers: [(name: String, value: String)]

    public init(status: Int, body: [UInt8], headers: [(name: String, value: String)] = []) {
        self.status = status
        self.body = body
        self.headers = headers
    }

    /// A plain-text answer.
    public static func text(_ status: Int, _ text: String, contentType: String = "text/plain; charset=utf-8",
                            headers: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, body: Array(text.utf8), headers: [("Content-Type", contentType)] + headers)
    }
}

/// Why a server could not start.
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// An HTTP/1.1 server: libmicrohttpd with its own thread pool polling with epoll, so an idle or slow client holds
/// only its own connection (until the timeout), never a thread, and never the next request.
///
/// libmicrohttpd parses requests and answers malformed ones itself (400, 431 for too-long heads, 413); the
/// handler gets only well-formed requests and runs on the pool thread that accepted the connection, so handlers
/// on different threads may run at once.
public final class HTTPServer: @unchecked Sendable {
    /// How much the server takes on; the defaults suit a metrics endpoint or a small dashboard.
    public struct Limits: Sendable {
        /// Pool threads; each polls its own share of the connections.
        public var threads = 2
        /// Open connections in all; past it, new ones are closed at once.
        public var connections = 128
        /// Open connections from one address. Above the 30 idle connections of the drill (issue 18), below the
        /// total, so one host cannot take every connection from a scraper on another.
        public var connectionsPerAddress = 64
        /// A connection with no traffic for this long is closed.
        public var timeoutSeconds = 2
        /// Memory per connection for the request head and the buffers (libmicrohttpd's default is 32 KB).
        public var memoryPerConnection = 16 * 1024

        public init() {}
    }

    // The daemon and the boxed handler: created together in init, the daemon stopped in stop()/deinit before the
    // box is released (a pool thread may be inside the handler until MHD_stop_daemon returns). `lock` keeps two
    // stop() calls from stopping the daemon twice.
    private var daemon: OpaquePointer?
    private let context: Unmanaged<HandlerBox>
    private var lock = pthread_mutex_t()

    /// Starts answering on `listeningSocket` (bound and listening). From here on the server owns the socket:
    /// libmicrohttpd closes it when the server stops. When init throws, the socket is still the caller's.
    public init(listeningSocket: Int32, limits: Limits = Limits(),
                handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse) throws(HTTPServerError)
    {
        let box = Unmanaged.passRetained(HandlerBox(handler))
        let flags = UInt32(MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue)
        let options: [CVarArg] = [
            MHD_OPTION.LISTEN_SOCKET.rawValue, listeningSocket,
            MHD_OPTION.THREAD_POOL_SIZE.rawValue, UInt32(max(limits.threads, 1)),
            MHD_OPTION.CONNECTION_LIMIT.rawValue, UInt32(limits.connections),
            MHD_OPTION.PER_IP_CONNECTION_LIMIT.rawValue, UInt32(limits.connectionsPerAddress),
            MHD_OPTION.CONNECTION_TIMEOUT.rawValue, UInt32(limits.timeoutSeconds),
            MHD_OPTION.CONNECTION_MEMORY_LIMIT.rawValue, limits.memoryPerConnection,
            MHD_OPTION.END.rawValue,
        ]
        // MHD_start_daemon is variadic, which Swift cannot call; its va_list twin takes the same options.
        let started = withVaList(options) { arguments in
            MHD_start_daemon_va(flags, 0, nil, nil, answer, box.toOpaque(), arguments)
        }
        guard let started else {
            box.release()
            throw HTTPServerError(message: "libmicrohttpd could not start on socket \(listeningSocket) "
                + "(\(limits.threads) threads, epoll)")
        }
        daemon = started
        context = box
        pthread_mutex_init(&lock, nil)
    }

    /// Stops answering: waits for requests in progress, closes every connection and the listening socket.
    public func stop() {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        if let daemon { MHD_stop_daemon(daemon) }
        daemon = nil
    }

    deinit {
        stop()
        context.release()
        pthread_mutex_destroy(&lock)
    }
}

/// The Swift handler, passed to libmicrohttpd as the callback's context.
private final class HandlerBox: Sendable {
    let handle: @Sendable (HTTPRequest) -> HTTPResponse
    init(_ handle: @escaping @Sendable (HTTPRequest) -> HTTPResponse) { self.handle = handle }
}

/// The GET arguments of the request on `connection`, collected through libmicrohttpd's iterator (the strings are
/// the connection's, valid during the call only, so they are copied).
private func queryArguments(of connection: OpaquePointer) -> [String: String] {
    final class Collected { var arguments: [String: String] = [:] }
    let collected = Collected()
    let box = Unmanaged.passRetained(collected)
    defer { box.release() }
    _ = MHD_get_connection_values(connection, MHD_ValueKind.GET_ARGUMENT_KIND, { context, _, key, value in
        guard let context, let key else { return .YES }
        Unmanaged<Collected>.fromOpaque(context).takeUnretainedValue().arguments[String(cString: key)] =
            value.map { String(cString: $0) } ?? ""
        return .YES
    }, box.toOpaque())
    return collected.arguments
}

/// libmicrohttpd's access handler: called once the request head is parsed, then again for each piece of a body.
/// Answering on the first call is allowed; a body the handler does not want is discarded by libmicrohttpd.
private let answer: MHD_AccessHandlerCallback = { context, connection, url, method, _, _, _, _ in
    guard let context, let connection else { return .NO }
    let box = Unmanaged<HandlerBox>.fromOpaque(context).takeUnretainedValue()
    let request = HTTPRequest(method: method.map { String(cString: $0) } ?? "",
                              path: url.map { String(cString: $0) } ?? "", query: queryArguments(of: connection))
    let response = box.handle(request)
    // MUST_COPY: libmicrohttpd copies the body, so the Swift array may go away when this returns.
    let made = response.body.withUnsafeBytes { body in
        MHD_create_response_from_buffer(body.count, UnsafeMutableRawPointer(mutating: body.baseAddress),
                                        .RESPMEM_MUST_COPY)
    }
    guard let made else { return .NO }   // out of memory: libmicrohttpd closes the connection
    defer { MHD_destroy_response(made) }
    for (name, value) in response.headers { _ = MHD_add_response_header(made, name, value) }
    return MHD_queue_response(connection, UInt32(response.status), made)
}
