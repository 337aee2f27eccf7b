import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#endif

/// A request as the handler sees it: the method, the path (percent-decoded by libmicrohttpd, without the query),
/// the GET arguments, the head's fields, who sent it and, for POST and PUT, the body (at most
/// `Limits.maxBodyBytes`; a longer one is answered 413 without calling the handler).
public struct HTTPRequest: Sendable {
    public let method: String
    public let path: String
    /// GET arguments, decoded; of a repeated name, the last.
    public let query: [String: String]
    /// Head fields by lowercased name (a repeated field's values joined with ", ", as RFC 9110 allows).
    public let headers: [String: String]
    /// The peer's numeric address ("127.0.0.1", "::1"); "" when libmicrohttpd does not say.
    public let peerAddress: String
    public let body: [UInt8]

    public init(method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:],
                peerAddress: String = "", body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $0 + ", " + $1 })
        self.peerAddress = peerAddress
        self.body = body
    }

    /// A head field by name, any case.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// True for a peer on this machine (127.0.0.0/8, ::1, or IPv4 mapped into IPv6 loopback).
    public var peerIsLoopback: Bool {
        peerAddress == "::1" || peerAddress.hasPrefix("127.") || peerAddress.hasPrefix("::ffff:127.")
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
        /// The longest request body taken (POST, PUT); a longer one gets 413 and is never held in memory.
        public var maxBodyBytes = 1 << 20
        /// Body bytes held for all requests at once; a body that would go past it gets 503 (try again), so many
        /// uploads at once cannot take the memory that one is allowed times the connection limit.
        public var maxBodyBytesInFlight = 4 << 20
        /// Connections the kernel holds for the pool before it accepts them (the listen backlog), set again on the
        /// socket given; 0 keeps the socket's own. A burst of clients past it is not refused on Linux, but each
        /// one left out waits a second or more for its connect to be tried again.
        public var backlog: Int32 = 0
        /// Threads that answer the requests `isHeavy` picks (page renders), each request's connection suspended
        /// meanwhile, so the pool threads go on answering everything else; 0: every request is answered on the
        /// pool thread that read it.
        public var heavyThreads = 0
        /// Heavy requests that may wait for one of those threads; the next one is answered 503 with Retry-After
        /// at once, so a burst of renders never piles up.
        public var heavyQueue = 4
        /// The Retry-After of that 503, in seconds.
        public var heavyRetryAfterSeconds = 2
        /// A request's head must arrive whole within this many seconds of its first byte (of the connection, or of
        /// the end of the request before on it), however steadily it trickles; its body gets one more second per
        /// `bodyBytesPerSecond` it declares. Past it the connection is closed. 0: only `timeoutSeconds` (idle).
        public var requestSeconds = 10
        /// The slowest body upload taken, for the deadline above.
        public var bodyBytesPerSecond = 256 * 1024

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
    /// `isHeavy` picks the GET and HEAD requests answered on the heavy threads (`Limits.heavyThreads`); it runs on
    /// a pool thread for every such request, so it must be quick.
    public init(listeningSocket: Int32, limits: Limits = Limits(),
                isHeavy: (@Sendable (HTTPRequest) -> Bool)? = nil,
                handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse) throws(HTTPServerError)
    {
        // listen() again on a listening socket only changes its backlog.
        if limits.backlog > 0 && listen(listeningSocket, limits.backlog) != 0 {
            throw HTTPServerError(message: "cannot set the listen backlog of socket \(listeningSocket) to \(limits.backlog): "
                + String(cString: strerror(errno)))
        }
        let heavy = limits.heavyThreads > 0 && isHeavy != nil
            ? HeavyPool(threads: limits.heavyThreads, queue: max(0, limits.heavyQueue),
                        retryAfter: max(1, limits.heavyRetryAfterSeconds), isHeavy: isHeavy!, handle: handler)
            : nil
        let deadlines = limits.requestSeconds > 0
            ? Deadlines(requestMilliseconds: Int64(limits.requestSeconds) * 1000, bodyBytesPerSecond: max(1, limits.bodyBytesPerSecond),
                        longestBody: max(0, limits.maxBodyBytes))
            : nil
        let box = Unmanaged.passRetained(HandlerBox(handler, maxBodyBytes: max(0, limits.maxBodyBytes),
                                                       maxInFlight: max(limits.maxBodyBytes, limits.maxBodyBytesInFlight),
                                                       heavy: heavy, deadlines: deadlines))
        // Suspending a connection while a heavy thread answers needs libmicrohttpd's inter-thread channel.
        let flags = UInt32(MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue)
            | (heavy != nil ? UInt32(MHD_ALLOW_SUSPEND_RESUME.rawValue) : 0)
        let options: [CVarArg] = [
            MHD_OPTION.LISTEN_SOCKET.rawValue, listeningSocket,
            MHD_OPTION.THREAD_POOL_SIZE.rawValue, UInt32(max(limits.threads, 1)),
            MHD_OPTION.CONNECTION_LIMIT.rawValue, UInt32(limits.connections),
            MHD_OPTION.PER_IP_CONNECTION_LIMIT.rawValue, UInt32(limits.connectionsPerAddress),
            MHD_OPTION.CONNECTION_TIMEOUT.rawValue, UInt32(limits.timeoutSeconds),
            MHD_OPTION.CONNECTION_MEMORY_LIMIT.rawValue, limits.memoryPerConnection,
            // Frees a request's body buffer however the request ends (answered, timed out, client gone).
            MHD_OPTION.NOTIFY_COMPLETED.rawValue, OpaquePointer(unsafeBitCast(completed, to: UnsafeMutableRawPointer.self)),
            OpaquePointer(box.toOpaque()),
            // %HH decoded as libmicrohttpd does, except %00, kept as it is: decoded, it ended the C string of the
            // path before a handler could see it ("/a%00/../b" arrived as "/a").
            MHD_OPTION.UNESCAPE_CALLBACK.rawValue, OpaquePointer(unsafeBitCast(unescaped, to: UnsafeMutableRawPointer.self)),
            OpaquePointer(box.toOpaque()),   // its context, unused
            // Connections started and closed: the whole-request deadline's registry.
            MHD_OPTION.NOTIFY_CONNECTION.rawValue, OpaquePointer(unsafeBitCast(connectionChanged, to: UnsafeMutableRawPointer.self)),
            OpaquePointer(box.toOpaque()),
            MHD_OPTION.END.rawValue,
        ]
        // MHD_start_daemon is variadic, which Swift cannot call; its va_list twin takes the same options.
        let started = withVaList(options) { arguments in
            MHD_start_daemon_va(flags, 0, nil, nil, answer, box.toOpaque(), arguments)
        }
        guard let started else {
            heavy?.stop()
            deadlines?.stop()
            box.release()
            throw HTTPServerError(message: "libmicrohttpd could not start on socket \(listeningSocket) "
                + "(\(limits.threads) threads, epoll)")
        }
        daemon = started
        context = box
        pthread_mutex_init(&lock, nil)
    }

    /// Stops answering: waits for requests in progress (heavy ones still waiting are answered 503), closes every
    /// connection and the listening socket.
    public func stop() {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        guard let daemon else { return }
        // libmicrohttpd must not be stopped with a connection suspended: every heavy request is answered and its
        // connection resumed first, then the pool threads get a moment to take the answers up.
        let box = context.takeUnretainedValue()
        box.heavy?.stop()
        box.waitForResumed(milliseconds: 2000)
        MHD_stop_daemon(daemon)
        box.deadlines?.stop()
        self.daemon = nil
    }

    deinit {
        stop()
        context.release()
        pthread_mutex_destroy(&lock)
    }
}

/// The Swift handler, passed to libmicrohttpd as the callback's context.
private final class HandlerBox: @unchecked Sendable {
    let handle: @Sendable (HTTPRequest) -> HTTPResponse
    let maxBodyBytes: Int
    let maxInFlight: Int
    let heavy: HeavyPool?
    let deadlines: Deadlines?
    // Thread-safety: `inFlight` (body bytes held by all requests) and `suspended` (heavy requests admitted and not
    // ended yet: suspended, or resumed and being sent) are read and written holding `mutex`; pool threads, heavy
    // threads and stop() change them at once.
    private var mutex = pthread_mutex_t()
    private var inFlight = 0
    private var suspended = 0

    init(_ handle: @escaping @Sendable (HTTPRequest) -> HTTPResponse, maxBodyBytes: Int, maxInFlight: Int,
         heavy: HeavyPool?, deadlines: Deadlines?) {
        self.handle = handle
        self.maxBodyBytes = maxBodyBytes
        self.maxInFlight = maxInFlight
        self.heavy = heavy
        self.deadlines = deadlines
        pthread_mutex_init(&mutex, nil)
    }

    func countSuspended(_ change: Int) {
        pthread_mutex_lock(&mutex)
        suspended += change
        pthread_mutex_unlock(&mutex)
    }

    /// Waits until every heavy request admitted has ended (its answer sent), or `milliseconds` pass.
    func waitForResumed(milliseconds: Int) {
        for _ in 0..<max(1, milliseconds / 10) {
            pthread_mutex_lock(&mutex)
            let left = suspended
            pthread_mutex_unlock(&mutex)
            if left <= 0 { return }
            usleep(10_000)
        }
    }

    deinit { pthread_mutex_destroy(&mutex) }

    /// Takes `count` more bytes of the budget; false (and nothing taken) when that would pass it.
    func reserve(_ count: Int) -> Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        guard inFlight + count <= maxInFlight else { return false }
        inFlight += count
        return true
    }

    func release(_ count: Int) {
        pthread_mutex_lock(&mutex)
        inFlight -= count
        pthread_mutex_unlock(&mutex)
    }
}

/// One request's state across libmicrohttpd's calls of the access handler, which all get the same per-request
/// pointer that owns this (retained there, released in `completed`): a body as it arrives, one piece a call (only
/// one pool thread serves a connection, so the pieces never arrive at once), or a heavy request's answer, set by
/// the heavy thread under `lock` before it resumes the connection and taken by the pool thread called again after.
private final class RequestState: @unchecked Sendable {
    var bytes: [UInt8] = []
    var tooLarge = false
    /// Past the server's budget for all bodies at once: answered 503.
    var overBudget = false
    /// The budget this body holds, given back when the request ends (`completed`).
    var reserved = 0
    /// A heavy request: its connection was suspended, counted in `box` until the request ends.
    var deferred = false
    var counted = false
    private var answer: HTTPResponse?
    private var lock = pthread_mutex_t()
    let box: HandlerBox

    init(_ box: HandlerBox) {
        self.box = box
        pthread_mutex_init(&lock, nil)
    }

    deinit {
        box.release(reserved)
        pthread_mutex_destroy(&lock)
    }

    func setAnswer(_ response: HTTPResponse) {
        pthread_mutex_lock(&lock)
        answer = response
        pthread_mutex_unlock(&lock)
    }

    func takeAnswer() -> HTTPResponse? {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        return answer
    }

    /// The request has ended (or was never admitted).
    func uncount() {
        guard counted else { return }
        counted = false
        box.countSuspended(-1)
    }
}

/// The threads that answer heavy requests, and the requests waiting for one.
/// Thread-safety: `waiting`, `running` and `stopping` are read and written holding `mutex`; `ready` wakes the
/// threads for a new request or for stop. Owns its threads, joined in `stop`.
private final class HeavyPool: @unchecked Sendable {
    /// A suspended request. Thread-safety: the connection pointer is used only to resume it, which libmicrohttpd
    /// allows from any thread, once.
    struct Job: @unchecked Sendable {
        let request: HTTPRequest
        let state: RequestState
        let connection: OpaquePointer
    }

    let capacity: Int
    let retryAfter: Int
    let isHeavy: @Sendable (HTTPRequest) -> Bool
    private let handle: @Sendable (HTTPRequest) -> HTTPResponse
    private var mutex = pthread_mutex_t()
    private var ready = pthread_cond_t()
    private var waiting: [Job] = []
    private var running = 0
    private var stopping = false
    private var threads: [pthread_t] = []

    init(threads count: Int, queue: Int, retryAfter: Int, isHeavy: @escaping @Sendable (HTTPRequest) -> Bool,
         handle: @escaping @Sendable (HTTPRequest) -> HTTPResponse) {
        capacity = count + queue
        self.retryAfter = retryAfter
        self.isHeavy = isHeavy
        self.handle = handle
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&ready, nil)
        for _ in 0..<count {
            if let thread = startThread({ self.serve() }) { threads.append(thread) }
        }
    }

    deinit {
        pthread_cond_destroy(&ready)
        pthread_mutex_destroy(&mutex)
    }

    /// Queues one more heavy request, its connection suspended first (under the lock, so no thread can resume it
    /// before): false, and nothing suspended, when every thread is busy and the queue is full.
    func admit(_ job: Job) -> Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        guard !stopping, !threads.isEmpty, running + waiting.count < capacity else { return false }
        MHD_suspend_connection(job.connection)
        waiting.append(job)
        pthread_cond_signal(&ready)
        return true
    }

    private func serve() {
        while true {
            pthread_mutex_lock(&mutex)
            while waiting.isEmpty && !stopping { pthread_cond_wait(&ready, &mutex) }
            if waiting.isEmpty {
                pthread_mutex_unlock(&mutex)
                return
            }
            let job = waiting.removeFirst()
            running += 1
            pthread_mutex_unlock(&mutex)
            Self.finish(job, handle(job.request))
            pthread_mutex_lock(&mutex)
            running -= 1
            pthread_mutex_unlock(&mutex)
        }
    }

    static func finish(_ job: Job, _ response: HTTPResponse) {
        job.state.setAnswer(response)
        MHD_resume_connection(job.connection)
    }

    /// Answers the waiting requests 503, lets the running ones finish, and joins the threads.
    func stop() {
        pthread_mutex_lock(&mutex)
        stopping = true
        let left = waiting
        waiting = []
        pthread_cond_broadcast(&ready)
        let joined = threads
        threads = []
        pthread_mutex_unlock(&mutex)
        for job in left {
            Self.finish(job, .text(503, "the server is stopping\n", headers: [("Retry-After", String(retryAfter))]))
        }
        for thread in joined { pthread_join(thread, nil) }
    }
}

/// The whole-request deadline (slowloris): libmicrohttpd's timeout counts idle time only, so a client sending a
/// header line every few seconds held its connection for good. Each connection is registered when it starts; its
/// deadline is set when a request may begin (the connection opened, or the request before it ended), moved on by
/// the body it declares, and lifted while the request is answered; a thread of its own closes (shutdown) the
/// socket of a connection past it, which libmicrohttpd then reads as the client gone.
///
/// Thread-safety: `entries` and every entry's fields are read and written holding `mutex`; the pool threads (start,
/// head, answer, end, close) and the reaper use them at once. libmicrohttpd tells of a close before it closes the
/// socket, and the entry leaves the registry then, under the same mutex, so the reaper never shuts another socket.
private final class Deadlines: @unchecked Sendable {
    final class Entry {
        let fd: Int32
        var deadline: Int64
        var answering = false
        var cut = false
        init(fd: Int32, deadline: Int64) {
            self.fd = fd
            self.deadline = deadline
        }
    }

    let requestMilliseconds: Int64
    let bodyBytesPerSecond: Int
    let longestBody: Int
    private var entries: [ObjectIdentifier: Entry] = [:]
    private var mutex = pthread_mutex_t()
    private var stopping = false
    private var reaper = pthread_t()
    private var reaping = false

    init(requestMilliseconds: Int64, bodyBytesPerSecond: Int, longestBody: Int) {
        self.requestMilliseconds = requestMilliseconds
        self.bodyBytesPerSecond = bodyBytesPerSecond
        self.longestBody = longestBody
        pthread_mutex_init(&mutex, nil)
        if let thread = startThread({ self.reap() }) {
            reaper = thread
            reaping = true
        }
    }

    deinit { pthread_mutex_destroy(&mutex) }

    static var now: Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return body()
    }

    func started(fd: Int32) -> Entry {
        let entry = Entry(fd: fd, deadline: Self.now + requestMilliseconds)
        locked { entries[ObjectIdentifier(entry)] = entry }
        return entry
    }

    func closed(_ entry: Entry) { locked { _ = entries.removeValue(forKey: ObjectIdentifier(entry)) } }

    /// The head is in: a request without a body is answered now; a body gets its time on top.
    func headReceived(_ entry: Entry, body: Int?) {
        locked {
            if let body {
                entry.deadline += Int64(min(body, longestBody)) * 1000 / Int64(bodyBytesPerSecond)
            } else {
                entry.answering = true
            }
        }
    }

    func answering(_ entry: Entry) { locked { entry.answering = true } }

    /// The request ended: the next one on the connection has the whole time from now.
    func ended(_ entry: Entry) {
        locked {
            entry.answering = false
            entry.deadline = Self.now + requestMilliseconds
        }
    }

    private func reap() {
        while true {
            usleep(100_000)
            let now = Self.now
            let done: Bool = locked {
                for entry in entries.values where !entry.answering && !entry.cut && now > entry.deadline {
                    entry.cut = true
                    shutdown(entry.fd, Int32(SHUT_RDWR))
                }
                return stopping
            }
            if done { return }
        }
    }

    func stop() {
        let running: Bool = locked {
            stopping = true
            return reaping
        }
        if running { pthread_join(reaper, nil) }
        locked { reaping = false }
    }
}

/// libmicrohttpd's connection callback: registers a connection's deadline when it starts, drops it when it closes.
private let connectionChanged: MHD_NotifyConnectionCallback = { context, connection, socketContext, change in
    guard let context, let connection, let socketContext else { return }
    guard let deadlines = Unmanaged<HandlerBox>.fromOpaque(context).takeUnretainedValue().deadlines else { return }
    if change.rawValue == 0 {   // MHD_CONNECTION_NOTIFY_STARTED
        let entry = deadlines.started(fd: ocrfarm_mhd_connection_fd(connection))
        socketContext.pointee = Unmanaged.passRetained(entry).toOpaque()
    } else if let pointer = socketContext.pointee {
        let entry = Unmanaged<Deadlines.Entry>.fromOpaque(pointer)
        deadlines.closed(entry.takeUnretainedValue())
        entry.release()
        socketContext.pointee = nil
    }
}

/// The deadline entry of `connection`, when deadlines are kept.
/// Starts `body` on a thread of its own, which holds `body` (and what it captures) until it returns; nil, and
/// `body` let go, when the system gives no thread.
private func startThread(_ body: @escaping () -> Void) -> pthread_t? {
    final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }
    var thread = pthread_t()
    let context = Unmanaged.passRetained(Body(body)).toOpaque()
    guard pthread_create(&thread, nil, { context in
        Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
        return nil
    }, context) == 0 else {
        Unmanaged<Body>.fromOpaque(context).release()
        return nil
    }
    return thread
}

private func deadlineEntry(_ connection: OpaquePointer) -> Deadlines.Entry? {
    ocrfarm_mhd_socket_context(connection).map { Unmanaged<Deadlines.Entry>.fromOpaque($0).takeUnretainedValue() }
}

/// libmicrohttpd's unescaper for paths and arguments: %HH becomes its byte, in place, except %00, which stays as the
/// three characters (a handler refuses it where it matters); anything else is copied as it is.
private let unescaped: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<CChar>?) -> Int = { _, _, text in
    guard let text else { return 0 }
    func hex(_ value: CChar) -> Int? {
        switch UInt8(bitPattern: value) {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(value) - Int(UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(value) - Int(UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(value) - Int(UInt8(ascii: "A")) + 10
        default: nil
        }
    }
    var read = 0, write = 0
    while text[read] != 0 {
        if text[read] == CChar(UInt8(ascii: "%")), text[read + 1] != 0, text[read + 2] != 0,
           let high = hex(text[read + 1]), let low = hex(text[read + 2]), high * 16 + low != 0 {
            text[write] = CChar(bitPattern: UInt8(high * 16 + low))
            read += 3
        } else {
            text[write] = text[read]
            read += 1
        }
        write += 1
    }
    text[write] = 0
    return write
}

/// Collects the key/value pairs of one kind (GET arguments or head fields) from libmicrohttpd.
private final class Pairs {
    var values: [String: String] = [:]
    let joinRepeated: Bool
    init(joinRepeated: Bool) { self.joinRepeated = joinRepeated }
}

private let collect: MHD_KeyValueIterator = { context, _, key, value in
    guard let context, let key else { return .YES }
    let pairs = Unmanaged<Pairs>.fromOpaque(context).takeUnretainedValue()
    let name = String(cString: key)
    let text = value.map { String(cString: $0) } ?? ""
    if pairs.joinRepeated, let old = pairs.values[name.lowercased()] {
        pairs.values[name.lowercased()] = old + ", " + text
    } else {
        pairs.values[pairs.joinRepeated ? name.lowercased() : name] = text
    }
    return .YES
}

private func values(_ connection: OpaquePointer, _ kind: MHD_ValueKind, joinRepeated: Bool) -> [String: String] {
    let pairs = Pairs(joinRepeated: joinRepeated)
    withExtendedLifetime(pairs) {
        _ = MHD_get_connection_values(connection, kind, collect, Unmanaged.passUnretained(pairs).toOpaque())
    }
    return pairs.values
}

/// The peer's numeric address, from the socket address libmicrohttpd accepted.
private func peerAddress(_ connection: OpaquePointer) -> String {
    guard let address = ocrfarm_mhd_client_address(connection) else { return "" }
    let length = address.pointee.sa_family == sa_family_t(AF_INET6) ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size
    var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
    guard getnameinfo(address, socklen_t(length), &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 else { return "" }
    return host.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
}

/// Frees the request's state, if it had one.
private let completed: MHD_RequestCompletedCallback = { context, connection, requestContext, _ in
    if let context, let connection, let deadlines = Unmanaged<HandlerBox>.fromOpaque(context).takeUnretainedValue().deadlines,
       let entry = deadlineEntry(connection) {
        deadlines.ended(entry)
    }
    guard let requestContext, let pointer = requestContext.pointee else { return }
    let state = Unmanaged<RequestState>.fromOpaque(pointer)
    state.takeUnretainedValue().uncount()
    state.release()
    requestContext.pointee = nil
}

private func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
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

/// libmicrohttpd's access handler: called once the request head is parsed, then again for each piece of a body,
/// then once more with no data when the body is complete. GET and other bodiless methods are answered on the first
/// call (a heavy one is handed to a heavy thread with its connection suspended, and answered on the call after
/// the thread resumes it); POST and PUT get a body buffer on the first call and are answered on the last.
private let answer: MHD_AccessHandlerCallback = { context, connection, url, method, _, uploadData, uploadSize, requestContext in
    guard let context, let connection, let requestContext else { return .NO }
    let box = Unmanaged<HandlerBox>.fromOpaque(context).takeUnretainedValue()
    if let existing = requestContext.pointee {
        let state = Unmanaged<RequestState>.fromOpaque(existing).takeUnretainedValue()
        if state.deferred {
            // Only a resume calls again, and the answer is set before it.
            return queue(state.takeAnswer() ?? .text(500, "the answer was lost\n"), on: connection)
        }
    }
    let methodText = method.map { String(cString: $0) } ?? ""
    let takesBody = methodText == "POST" || methodText == "PUT" || methodText == "PATCH"
    let entry = box.deadlines != nil ? deadlineEntry(connection) : nil
    if takesBody {
        guard let existing = requestContext.pointee else {
            let buffer = RequestState(box)
            // A declared length past the bound is refused before a byte of the body is read.
            let declared = values(connection, MHD_ValueKind.HEADER_KIND, joinRepeated: true)["content-length"].flatMap { Int($0) }
            if let entry { box.deadlines?.headReceived(entry, body: declared ?? box.maxBodyBytes) }
            if let declared, declared > box.maxBodyBytes {
                return queue(.text(413, "the body is \(declared) bytes; at most \(box.maxBodyBytes) are taken\n"), on: connection)
            }
            requestContext.pointee = Unmanaged.passRetained(buffer).toOpaque()
            return .YES
        }
        let buffer = Unmanaged<RequestState>.fromOpaque(existing).takeUnretainedValue()
        if let uploadSize, uploadSize.pointee > 0 {
            // A chunked body past the bound is read and dropped (never held), then answered 413.
            if !buffer.tooLarge && !buffer.overBudget, let uploadData {
                if buffer.bytes.count + uploadSize.pointee > box.maxBodyBytes {
                    buffer.tooLarge = true
                    buffer.bytes = []
                } else if !box.reserve(uploadSize.pointee) {
                    buffer.overBudget = true
                    buffer.bytes = []
                } else {
                    buffer.reserved += uploadSize.pointee
                    uploadData.withMemoryRebound(to: UInt8.self, capacity: uploadSize.pointee) {
                        buffer.bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: uploadSize.pointee))
                    }
                }
            }
            uploadSize.pointee = 0
            return .YES
        }
        if buffer.tooLarge {
            return queue(.text(413, "the body is longer than \(box.maxBodyBytes) bytes\n"), on: connection)
        }
        if buffer.overBudget {
            return queue(.text(503, "too many uploads at once; try again\n", headers: [("Retry-After", "1")]), on: connection)
        }
    }
    if let entry {
        if takesBody { box.deadlines?.answering(entry) } else { box.deadlines?.headReceived(entry, body: nil) }
    }
    let body = takesBody ? requestContext.pointee.map { Unmanaged<RequestState>.fromOpaque($0).takeUnretainedValue().bytes } ?? [] : []
    let request = HTTPRequest(method: methodText, path: url.map { String(cString: $0) } ?? "",
                              query: values(connection, MHD_ValueKind.GET_ARGUMENT_KIND, joinRepeated: false),
                              headers: values(connection, MHD_ValueKind.HEADER_KIND, joinRepeated: true),
                              peerAddress: peerAddress(connection), body: body)
    if !takesBody, let heavy = box.heavy, heavy.isHeavy(request) {
        let state = RequestState(box)
        state.deferred = true
        state.counted = true
        box.countSuspended(1)
        requestContext.pointee = Unmanaged.passRetained(state).toOpaque()
        guard heavy.admit(HeavyPool.Job(request: request, state: state, connection: connection)) else {
            state.uncount()
            state.deferred = false
            Unmanaged<RequestState>.fromOpaque(requestContext.pointee!).release()
            requestContext.pointee = nil
            return queue(.text(503, "busy: \(heavy.capacity) heavy requests (page images) are being answered or waiting; "
                                + "try again\n", headers: [("Retry-After", String(heavy.retryAfter))]), on: connection)
        }
        return .YES
    }
    return queue(box.handle(request), on: connection)
}
