#if canImport(Glibc)
import Glibc
#endif
import FarmCore
import Synchronization

/// Why the metrics endpoint could not listen.
public struct MetricsServerError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// A tiny HTTP/1.0 responder for Prometheus: `GET /metrics` gets the text `render` makes, any other path 404.
///
/// Owns one listening TCP socket and one thread that answers one connection at a time and closes it (no
/// keep-alive). Every read and write on a connection has a deadline, so a slow or silent client holds the thread
/// for at most two timeouts and a broken request gets a 400; the thread never touches anything but the socket
/// and `render`, which runs on it (a coordinator passes a closure that opens the store read-only). `stop()`
/// closes the socket within a quarter of a second.
public final class MetricsServer: Sendable {
    /// The address actually bound, e.g. "127.0.0.1:9464" (the port the system chose for port 0).
    public let address: String
    public let port: Int
    private let stopped = StopFlag()
    private let thread: NativeThread

    /// Largest request head read; longer requests get a 431.
    static let maxRequestBytes = 8192

    /// Listens on `listen` ("HOST:PORT", "[::1]:PORT", or ":PORT" for every interface) and starts answering.
    public init(listen: String, path: String = "/metrics", timeoutMilliseconds: Int = 2000,
                render: @escaping @Sendable () throws -> String) throws(MetricsServerError)
    {
        let (fd, bound, port) = try Self.listen(listen)
        self.address = bound
        self.port = port
        let stopped = stopped
        thread = NativeThread.start(name: "metrics") {
            Self.serve(fd, path: path, timeoutMilliseconds: timeoutMilliseconds, render: render, stopped: stopped)
            close(fd)
        }
    }

    /// Stops answering and closes the socket; waits for the thread.
    public func stop() {
        stopped.value.store(true, ordering: .relaxed)
        thread.join()
    }

    // MARK: Listening

    private static func listen(_ text: String) throws(MetricsServerError) -> (Int32, String, Int) {
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
            guard bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0, Glibc.listen(fd, 16) == 0 else {
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

    // MARK: Answering

    private static func serve(_ listener: Int32, path: String, timeoutMilliseconds: Int,
                              render: @Sendable () throws -> String, stopped: StopFlag)
    {
        while !stopped.value.load(ordering: .relaxed) {
            var poll = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard Glibc.poll(&poll, 1, 250) > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            answer(client, path: path, timeoutMilliseconds: timeoutMilliseconds, render: render)
            close(client)
        }
    }

    private static func answer(_ client: Int32, path: String, timeoutMilliseconds: Int, render: () throws -> String) {
        var timeout = timeval(tv_sec: timeoutMilliseconds / 1000, tv_usec: (timeoutMilliseconds % 1000) * 1000)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let deadline = Clock.monotonicMilliseconds + Int64(timeoutMilliseconds)
        guard let head = readHead(client, deadline: deadline) else {
            return send(client, status: "408 Request Timeout", body: "request timed out\n", deadline: deadline + Int64(timeoutMilliseconds))
        }
        let writeDeadline = Clock.monotonicMilliseconds + Int64(timeoutMilliseconds)
        guard head.count <= maxRequestBytes else {
            return send(client, status: "431 Request Header Fields Too Large", body: "request too large\n", deadline: writeDeadline)
        }
        let line = head.prefix { $0 != 13 && $0 != 10 }
        let parts = line.split(separator: 32, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        guard parts.count == 3, parts[2].hasPrefix("HTTP/"), parts[1].hasPrefix("/") else {
            return send(client, status: "400 Bad Request", body: "not an HTTP request\n", deadline: writeDeadline)
        }
        let method = parts[0]
        guard method == "GET" || method == "HEAD" else {
            return send(client, status: "405 Method Not Allowed", body: "only GET\n", extra: "Allow: GET, HEAD\r\n",
                        deadline: writeDeadline)
        }
        let target = parts[1].split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        guard target == path else {
            return send(client, status: "404 Not Found", body: "not found; metrics are at \(path)\n", deadline: writeDeadline)
        }
        let body: String
        do {
            body = try render()
        } catch {
            return send(client, status: "500 Internal Server Error", body: "\(error)\n", deadline: writeDeadline)
        }
        send(client, status: "200 OK", body: body, contentType: "text/plain; version=0.0.4; charset=utf-8",
             headOnly: method == "HEAD", deadline: Clock.monotonicMilliseconds + Int64(timeoutMilliseconds))
    }

    /// Reads until the blank line that ends the request head; nil on timeout or a closed connection. Stops
    /// reading past `maxRequestBytes` (the caller answers 431).
    private static func readHead(_ client: Int32, deadline: Int64) -> [UInt8]? {
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 2048)
        while Clock.monotonicMilliseconds < deadline {
            let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            head += buffer[..<count]
            if head.count > maxRequestBytes { return head }
            if endsHead(head) { return head }
        }
        return nil
    }

    private static func endsHead(_ bytes: [UInt8]) -> Bool {
        let crlf: [UInt8] = [13, 10, 13, 10]
        if bytes.count >= 4 && Array(bytes.suffix(4)) == crlf { return true }
        if bytes.count >= 2 && bytes.suffix(2).allSatisfy({ $0 == 10 }) { return true }
        // A head may arrive with part of a body (or a second request); look for the end anywhere.
        for index in bytes.indices.dropLast(3) where bytes[index..<index + 4].elementsEqual(crlf) { return true }
        return false
    }

    private static func send(_ client: Int32, status: String, body: String, contentType: String = "text/plain; charset=utf-8",
                             extra: String = "", headOnly: Bool = false, deadline: Int64)
    {
        let bodyBytes = Array(body.utf8)
        var response = Array(("HTTP/1.0 \(status)\r\nContent-Type: \(contentType)\r\nContent-Length: \(bodyBytes.count)\r\n"
            + extra + "Connection: close\r\n\r\n").utf8)
        if !headOnly { response += bodyBytes }
        var offset = 0
        while offset < response.count && Clock.monotonicMilliseconds < deadline {
            let written = response.withUnsafeBytes { Glibc.send(client, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }
}

/// The flag `stop()` sets and the server thread polls.
private final class StopFlag: Sendable {
    let value = Atomic<Bool>(false)
}
