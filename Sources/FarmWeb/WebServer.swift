#if canImport(Glibc)
import Glibc
#endif
import FarmCore
import FarmRuntime
import FarmStore
import MicroHTTPD

/// How `ocrfarm serve` (and `coordinator --http`) answers.
public struct WebOptions: Sendable {
    /// Answer reads from any address without a token (a listen beyond loopback with no token needs this).
    public var insecureOpen = false
    /// The longest request body (a whole multipart upload).
    public var maxUploadBytes = 64 << 20
    /// Files in one upload.
    public var maxUploadFiles = 100
    /// Pool threads.
    public var threads = 4
    /// Threads that make or read page images (`/iiif/image/…`: a PDF page rendered, an image decoded and cut;
    /// `/api/pages/N/image`: the source read and hashed), apart from
    /// the pool threads, so `/api/status` and the rest answer while they run; each holds up to
    /// `RenderLimits.maxPixels` decoded, so this bounds the server's memory as much as its CPU.
    public var imageThreads = 2
    /// Image requests that may wait for those threads; past them a request is answered 503 with Retry-After.
    public var imageQueue = 4
    /// Seconds a request's head (and its body, at 256 KB/s) may take to arrive, however steadily it trickles.
    public var requestSeconds = 10
    /// Addresses of reverse proxies whose `X-Forwarded-For` names the client (`--trusted-proxy`). From any other
    /// peer the header is ignored; from these, a request without it is taken as from another machine.
    public var trustedProxies: Set<String> = []
    /// Where `/iiif/` goes (the FarmIIIF module's handler); nil answers 404.
    public var iiif: (@Sendable (HTTPRequest) -> HTTPResponse)?
    /// What makes `/api/pages/{id}/image`: a page as a browser image (PNG or JPEG), by the bounded renderer IIIF
    /// uses (FarmIIIF's `PageImages`: pixel cap before rendering, time and memory limits, a cache); nil answers 404.
    public var pageImage: (@Sendable (PageID) -> Result<PageImageAnswer, PageImageRefusal>)?

    public init() {}
}

/// A page's image for the browser: PNG or JPEG bytes and their media type.
public struct PageImageAnswer: Sendable {
    public let bytes: [UInt8]
    public let mediaType: String
    public init(bytes: [UInt8], mediaType: String) {
        self.bytes = bytes
        self.mediaType = mediaType
    }
}

/// Why a page has no image to show: the HTTP status and the reason, naming the page and its file.
public struct PageImageRefusal: Error, Sendable {
    public let status: Int
    public let reason: String
    public init(status: Int, reason: String) {
        self.status = status
        self.reason = reason
    }
}

/// Why the web server could not start.
public struct WebServerError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// The HTTP API, `/metrics` and (when given) IIIF on one libmicrohttpd server.
public final class WebServer: Sendable {
    public let address: String
    public let port: Int
    private let server: HTTPServer
    let api: API

    /// Listens on `listen` ("HOST:PORT", "[::1]:PORT", ":PORT") and serves the store at `storePath`, read through
    /// `readers` (read-only stores, one per server thread at most; the server's own when nil).
    /// A listen beyond loopback is refused unless a live token exists or `options.insecureOpen`.
    public init(listen: String, storePath: String, readers: StoreReaders? = nil, options: WebOptions = WebOptions(),
                webhook: Webhook? = nil) throws(WebServerError) {
        guard FileSystem.exists(storePath) else { throw WebServerError(message: "no store at \(storePath)") }
        // The pool threads and the image threads each hold at most one reader at a time.
        let readers = readers ?? StoreReaders(path: storePath, keptReaders: max(1, options.threads) + max(1, options.imageThreads))
        let loopbackOnly = Self.isLoopback(listen)
        if !loopbackOnly && !options.insecureOpen {
            let tokens = (try? readers.read { try Tokens.anyLive(in: $0) }) ?? false
            guard tokens else {
                throw WebServerError(message: "serving \(listen) beyond this machine needs an API token first "
                    + "(ocrfarm token create --store \(storePath) --role read), or --insecure-open")
            }
        }
        let api = API(readers: readers, options: options, webhook: webhook)
        let (fd, bound, port): (Int32, String, Int)
        do {
            (fd, bound, port) = try MetricsServer.bindListening(listen)
        } catch {
            throw WebServerError(message: "cannot listen on \(listen): \(error)")
        }
        var limits = HTTPServer.Limits()
        limits.threads = max(1, options.threads)
        // Hundreds of dashboard and API clients at once (issue 21: 200 on loopback) are queued, not refused:
        // connections up to the limit wait for a pool thread, and a burst of connects waits in the backlog.
        // libmicrohttpd splits the connection limit between the pool threads, and a thread that reaches its share
        // in a burst (one thread may accept most of it) left its connections unanswered until the 30 s timeout
        // (libmicrohttpd 0.9.75, epoll; 128 of 200 held connections, about one burst in ten): each thread's share
        // is kept above what one address may hold, so the per-address limit refuses first.
        limits.connectionsPerAddress = 256
        // In all, room for sixteen addresses at their limit (issue 37: 2,160 half-open connections from 9 loopback
        // addresses, under the per-address limit, filled the 2,048 there were and the next client waited 25 s),
        // within the process's descriptors (raised to their hard limit for it).
        limits.connections = max((limits.connectionsPerAddress + 256) * limits.threads,
                                 min(limits.connectionsPerAddress * 16, Self.raisedDescriptorLimit() - 256))
        limits.backlog = 1024
        limits.timeoutSeconds = 30
        // The whole request (head, and body at 256 KB/s or faster) within this, however it trickles: a client
        // sending a header line every 5 s held its connection past 40 s, since the timeout counts idle time.
        limits.requestSeconds = max(1, options.requestSeconds)
        limits.memoryPerConnection = 64 * 1024
        limits.maxBodyBytes = options.maxUploadBytes
        limits.maxBodyBytesInFlight = options.maxUploadBytes * 2   // two whole uploads at once, then 503
        limits.heavyThreads = max(1, options.imageThreads)
        limits.heavyQueue = max(0, options.imageQueue)
        limits.heavyRetryAfterSeconds = 2
        do {
            server = try HTTPServer(listeningSocket: fd, limits: limits, isHeavy: Self.isImage) { request in
                API.secured(api.answer(request))
            }
        } catch {
            close(fd)
            throw WebServerError(message: "cannot serve on \(bound): \(error)")
        }
        self.address = bound
        self.port = port
        self.api = api
    }

    public func stop() { server.stop() }

    /// "127.0.0.1", "::1": an address as the server reports a peer's (no names, no port).
    public static func isNumericAddress(_ text: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }

    /// Raises this process's open-file limit to its hard limit; returns the limit now.
    static func raisedDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(min(limit.rlim_cur, rlim_t(Int32.max)))
    }

    /// Requests that make or read a page image (`/iiif/image/…`, `/api/pages/N/image`: a source read and hashed,
    /// a PDF page rasterized, an image decoded and encoded), answered on the image threads.
    @Sendable static func isImage(_ request: HTTPRequest) -> Bool {
        request.path.hasPrefix("/iiif/image/") || (request.path.hasPrefix("/api/pages/") && request.path.hasSuffix("/image"))
    }

    /// "127.0.0.1:…", "127.x", "[::1]:…", "localhost:…": nothing from another machine can connect.
    static func isLoopback(_ listen: String) -> Bool {
        guard let colon = listen.lastIndex(of: ":") else { return false }
        var host = String(listen[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.hasPrefix("127.") || host == "::1" || host == "localhost"
    }
}
