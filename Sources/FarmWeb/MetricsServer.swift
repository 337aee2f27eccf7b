#if canImport(Glibc)
import Glibc
#endif
import FarmCore
import MicroHTTPD

/// Why the metrics endpoint could not listen.
public struct MetricsServerError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// The Prometheus endpoint: `GET /metrics` gets the text `render` makes, any other path 404.
///
/// HTTP is libmicrohttpd's (the MicroHTTPD wrapper): a pool of threads polling every connection, per-address
/// and total connection limits, and an idle timeout, so idle or slow clients cannot keep a scrape waiting (the
/// hand-written one-connection-at-a-time server this replaced answered a scrape after 60 s behind 30 idle
/// connections). `render` runs on a pool thread, possibly on two at once (a coordinator passes a closure that
/// opens the store read-only). This type binds the socket itself so that "HOST:PORT", "[::1]:PORT" and ":PORT"
/// mean what they always did, and port 0 reports the port the system chose.
public final class MetricsServer: Sendable {
    /// The address actually bound, e.g. "127.0.0.1:9464" (the port the system chose for port 0).
    public let address: String
    public let port: Int
    private let server: HTTPServer

    /// Listens on `listen` ("HOST:PORT", "[::1]:PORT", or ":PORT" for every interface) and starts answering.
    public init(listen: String, path: String = "/metrics", timeoutMilliseconds: Int = 2000,
                render: @escaping @Sendable () throws -> String) throws(MetricsServerError)
    {
        let (fd, bound, port) = try Self.bindListening(listen)
        self.address = bound
        self.port = port
        var limits = HTTPServer.Limits()
        limits.timeoutSeconds = max(1, (timeoutMilliseconds + 999) / 1000)
        do {
            server = try HTTPServer(listeningSocket: fd, limits: limits) { request in
                Self.answer(request, path: path, render: render)
            }
        } catch {
            close(fd)
            throw MetricsServerError(message: "cannot serve metrics on \(bound): \(error)")
        }
    }

    /// Stops answering and closes the socket; waits for requests in progress.
    public func stop() {
        server.stop()
    }

    static func answer(_ request: HTTPRequest, path: String, render: () throws -> String) -> HTTPResponse {
        guard request.method == "GET" || request.method == "HEAD" else {
            return .text(405, "only GET\n", headers: [("Allow", "GET, HEAD")])
        }
        guard request.path == path else { return .text(404, "not found; metrics are at \(path)\n") }
        do {
            // For HEAD libmicrohttpd sends the head (with the body's length) and leaves the body out.
            return .text(200, try render(), contentType: "text/plain; version=0.0.4; charset=utf-8")
        } catch {
            return .text(500, "\(error)\n")
        }
    }

    // MARK: Listening

    /// A socket bound to `text` ("HOST:PORT", "[::1]:PORT", ":PORT") and listening, the address bound and its port
    /// (the one the system chose for port 0); the caller owns the socket. Also what `ocrfarm serve` listens with.
    public static func bindListening(_ text: String) throws(MetricsServerError) -> (Int32, String, Int) {
        guard let colon = text.lastIndex(of: ":") else {
            throw MetricsServerError(message: "metrics address '\(text)' needs a port, e.g. 127.0.0.1:9464")
        }
        var host = String(text[..<colon])
        let portText = String(text[text.index(after: colon)...])
        guard let port = Int(portText), (0...65535).contains(port) else {
            throw MetricsServerError(message: "metrics address '\(text)': '\(portText)' is not a port number")
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = host.isEmpty ? getaddrinfo(nil, String(port), &hints, &list) : getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            throw MetricsServerError(message: "metrics address '\(text)': \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(list) }
        var lastError: Int32 = 0
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), info.pointee.ai_protocol)
            guard fd >= 0 else { lastError = errno; continue }
            var yes: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
            guard bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0, Glibc.listen(fd, 64) == 0 else {
                lastError = errno
                close(fd)
                continue
            }
            let (name, actualPort) = boundName(fd)
            return (fd, name, actualPort)
        }
        throw MetricsServerError(message: "cannot listen on \(text) for metrics: \(String(cString: strerror(lastError)))")
    }

    private static func boundName(_ fd: Int32) -> (String, Int) {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        let ok = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                getsockname(fd, address, &length) == 0
                    && getnameinfo(address, length, &host, socklen_t(host.count), &service, socklen_t(service.count),
                                   NI_NUMERICHOST | NI_NUMERICSERV) == 0
            }
        }
        guard ok else { return ("?", 0) }
        let hostText = host.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        let port = Int(service.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }) ?? 0
        return (hostText.contains(":") ? "[\(hostText)]:\(port)" : "\(hostText):\(port)", port)
    }
}
