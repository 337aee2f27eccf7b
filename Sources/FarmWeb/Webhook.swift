#if canImport(Glibc)
import Glibc
#endif
import Crypto
import FarmCore
import FarmRuntime
import FarmStore

/// The document-done webhook: each document that finishes (no page queued or leased) is POSTed as JSON
/// {document_id, name, pages, done, failed} to `url` with `X-Ocrfarm-Signature: sha256=<hex HMAC of the body>`.
///
/// Off everyone's hot path: a watcher thread reads the store (its own read-only connection, once a second) for
/// documents that finished since its last look, and a sender thread delivers from a bounded queue, retrying a
/// failed delivery (no answer, or not 2xx) with exponential backoff. Only plain http:// URLs (a receiver on the
/// same machine or network; TLS is a proxy's job).
public final class Webhook: Sendable {
    public struct Target: Sendable {
        public let host: String
        public let port: Int
        public let path: String
        public let url: String

        /// Parses "http://HOST[:PORT][/PATH]".
        public init(_ url: String) throws(WebServerError) {
            guard url.hasPrefix("http://") else { throw WebServerError(message: "the webhook URL must be http://HOST[:PORT]/PATH, not '\(url)'") }
            let rest = url.dropFirst(7)
            let slash = rest.firstIndex(of: "/") ?? rest.endIndex
            var authority = String(rest[..<slash])
            path = slash == rest.endIndex ? "/" : String(rest[slash...])
            var port = 80
            if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
                guard let number = Int(authority[authority.index(after: colon)...]), (1...65535).contains(number) else {
                    throw WebServerError(message: "the webhook URL '\(url)' has a bad port")
                }
                port = number
                authority = String(authority[..<colon])
            }
            if authority.hasPrefix("[") && authority.hasSuffix("]") { authority = String(authority.dropFirst().dropLast()) }
            guard !authority.isEmpty, !path.contains(where: { $0 == "\r" || $0 == "\n" || $0 == " " }) else {
                throw WebServerError(message: "the webhook URL '\(url)' has no host or a bad path")
            }
            host = authority
            self.port = port
            self.url = url
        }
    }

    public struct Retry: Sendable {
        public var attempts = 8
        public var firstDelayMilliseconds = 500
        public var maxDelayMilliseconds = 60_000
        public var timeoutMilliseconds = 5000
        public init() {}
    }

    public let target: Target
    let secret: [UInt8]
    let retry: Retry
    private let queue = BlockingQueue<[UInt8]>(capacity: 1000)
    private let state = WatchState()

    public init(url: String, secret: [UInt8], retry: Retry = Retry()) throws(WebServerError) {
        target = try Target(url)
        self.secret = secret
        self.retry = retry
    }

    /// The signature header's value for `body`.
    public func signature(_ body: [UInt8]) -> String { "sha256=" + SHA256.hex(digest: HMAC.sha256(key: secret, message: body)) }

    /// Starts the watcher (on the store at `storePath`) and the sender; they run until `stop`.
    public func start(storePath: String) {
        let watcher = NativeThread.start(name: "webhook-watch") { [self] in self.watch(storePath) }
        let sender = NativeThread.start(name: "webhook-send") { [self] in self.send() }
        state.set(watcher: watcher, sender: sender)
    }

    public func stop() {
        state.stopping()
        queue.close()
        state.join()
    }

    // MARK: Watching

    private func watch(_ storePath: String) {
        var working: Set<Int64>?
        var highest: Int64 = 0
        while !state.isStopping {
            do {
                let store = try Store(path: storePath, readOnly: true, busyTimeoutMilliseconds: 2000)
                try store.read {
                    let now = Set(try store.documentsWithWork().map(\.rawValue))
                    let newest = try store.newestDocumentID().rawValue
                    if let previous = working {
                        // Finished: had work at the last look and has none now, or came and finished in between.
                        var finished = previous.subtracting(now)
                        if newest > highest {
                            let fresh = try store.documentIDs(after: DocumentID(highest), limit: 10_000).map(\.rawValue)
                            finished.formUnion(fresh.filter { !now.contains($0) })
                        }
                        for id in finished.sorted() { try event(id, store) }
                    }
                    working = now
                    highest = newest
                }
            } catch {
                Log.warning("webhook: cannot read the store", ["error": "\(error)"])
            }
            for _ in 0..<10 where !state.isStopping { Clock.sleep(milliseconds: 100) }
        }
    }

    private func event(_ id: Int64, _ store: Store) throws {
        guard let document = try store.document(DocumentID(id)) else { return }   // deleted
        let counts = try store.counts(of: [DocumentID(id)])
        let body = JSON.object([
            ("event", "document.done"), ("document_id", JSON(Int(id))), ("name", JSON(document.name)),
            ("pages", JSON(document.pageCount)), ("done", JSON(counts[.done] ?? 0)), ("failed", JSON(counts[.failed] ?? 0)),
        ]).rendered
        // A full queue (a receiver down for long) holds the watcher here, and only the watcher: no event is lost.
        queue.push(Array(body.utf8))
    }

    // MARK: Sending

    /// A document's delivery: its body, the attempts made, and when it is due again.
    private struct Delivery {
        let body: [UInt8]
        var attempts = 0
        var due: Int64 = 0
        var delay: Int
    }

    /// Delivers each document as it comes; a failed delivery waits for its own retry (exponential backoff) while the
    /// documents after it go out at once, so a receiver that refuses one body holds up no other.
    private func send() {
        var retrying: [Delivery] = []
        var open = true
        while !state.isStopping && (open || !retrying.isEmpty) {
            let now = Clock.monotonicMilliseconds
            if let next = retrying.indices.min(by: { retrying[$0].due < retrying[$1].due }), retrying[next].due <= now {
                let delivery = retrying.remove(at: next)
                if let again = attempt(delivery) { retrying.append(again) }
                continue
            }
            let wait = retrying.map { Int($0.due - now) }.min().map { max(1, min($0, 200)) }
            guard open else {
                Clock.sleep(milliseconds: wait ?? 20)
                continue
            }
            if let body = queue.pop(timeoutMilliseconds: wait) {
                if let again = attempt(Delivery(body: body, delay: retry.firstDelayMilliseconds)) { retrying.append(again) }
            } else if wait == nil {
                open = false   // closed and drained
            }
        }
        // Stopping: what was queued and never tried gets one attempt, and no retry.
        while let body = queue.pop(timeoutMilliseconds: 0) {
            let status = post(body)
            if let status, (200..<300).contains(status) { continue }
            logFailure(attempt: 1, status: status)
        }
    }

    /// One attempt at `delivery`: nil when it is done with (delivered, or out of attempts), else the delivery due again.
    private func attempt(_ delivery: Delivery) -> Delivery? {
        var delivery = delivery
        delivery.attempts += 1
        let status = post(delivery.body)
        if let status, (200..<300).contains(status) { return nil }
        logFailure(attempt: delivery.attempts, status: status)
        guard delivery.attempts < max(1, retry.attempts) else { return nil }
        delivery.due = Clock.monotonicMilliseconds + Int64(delivery.delay)
        delivery.delay = min(delivery.delay * 2, retry.maxDelayMilliseconds)
        return delivery
    }

    /// A failed delivery, in the log: the attempt it was and the answer (or none).
    private func logFailure(attempt: Int, status: Int?) {
        Log.warning("webhook delivery failed", ["url": target.url, "attempt": String(attempt),
                                                "status": status.map(String.init) ?? "no answer"])
    }

    /// Starts the sender alone, for deliveries given by `enqueue` (tests).
    func startSending() {
        state.set(watcher: nil, sender: NativeThread.start(name: "webhook-send") { [self] in self.send() })
    }

    /// Queues a body for delivery, as the watcher does for each finished document.
    func enqueue(_ body: [UInt8]) { queue.push(body) }

    /// One delivery: the HTTP status of the answer, nil when there was none.
    func post(_ body: [UInt8]) -> Int? {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(target.host, String(target.port), &hints, &list) == 0, let first = list else { return nil }
        defer { freeaddrinfo(list) }
        let fd = socket(first.pointee.ai_family, first.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), first.pointee.ai_protocol)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var timeout = timeval(tv_sec: retry.timeoutMilliseconds / 1000, tv_usec: Int((retry.timeoutMilliseconds % 1000) * 1000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard connect(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else { return nil }
        let hostHeader = target.host.contains(":") ? "[\(target.host)]:\(target.port)" : "\(target.host):\(target.port)"
        let head = "POST \(target.path) HTTP/1.1\r\nHost: \(hostHeader)\r\nUser-Agent: ocrfarm\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n"
            + "X-Ocrfarm-Signature: \(signature(body))\r\nConnection: close\r\n\r\n"
        let request = Array(head.utf8) + body
        var sent = 0
        while sent < request.count {
            let count = request[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { return nil }
            sent += count
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while !answer.contains(10) && answer.count < 8192 {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            answer += buffer[..<count]
        }
        let line = String(decoding: answer.prefix { $0 != 13 && $0 != 10 }, as: UTF8.self)
        let fields = line.split(separator: " ")
        guard fields.count >= 2, fields[0].hasPrefix("HTTP/") else { return nil }
        return Int(fields[1])
    }
}

/// The threads and the stop flag, shared by the watcher, the sender and `stop`.
private final class WatchState: @unchecked Sendable {
    // Thread-safety: `stop`, `threads` are accessed holding `mutex`.
    private var mutex = pthread_mutex_t()
    private var stop = false
    private var threads: [NativeThread] = []

    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }

    var isStopping: Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return stop
    }

    func set(watcher: NativeThread?, sender: NativeThread) {
        pthread_mutex_lock(&mutex)
        threads = [watcher, sender].compactMap { $0 }
        pthread_mutex_unlock(&mutex)
    }

    func stopping() {
        pthread_mutex_lock(&mutex)
        stop = true
        pthread_mutex_unlock(&mutex)
    }

    func join() {
        pthread_mutex_lock(&mutex)
        let all = threads
        threads = []
        pthread_mutex_unlock(&mutex)
        for thread in all { thread.join() }
    }
}
