import FarmCore
import FarmIIIF
import FarmRuntime
import FarmStore
import FarmWeb

/// The web options `serve` and `coordinator --http` share.
enum WebServeOptions {
    static let specs: [OptionSpec] = [
        OptionSpec("--insecure-open", "Answer reads from any address without a token (a listen beyond loopback needs a token otherwise)."),
        OptionSpec("--webhook", value: "URL", "POST each finished document as JSON to this http:// URL (signed, retried)."),
        OptionSpec("--webhook-secret-file", value: "FILE", "The HMAC-SHA256 key for the webhook's X-Ocrfarm-Signature (required with --webhook)."),
        OptionSpec("--max-upload-bytes", value: "N", "Largest POST /api/submit body (default: 67108864)."),
        OptionSpec("--max-upload-files", value: "N", "Files in one upload at most (default: 100)."),
        OptionSpec("--trusted-proxy", value: "ADDR", repeatable: true,
                   "A reverse proxy's address (e.g. 127.0.0.1): from it, X-Forwarded-For names the client; never otherwise."),
        OptionSpec("--request-seconds", value: "N", "Seconds a request's head may take to arrive, its body 1 s more per 256 KB (default: 10)."),
    ]

    static func options(_ arguments: ParsedArguments) throws(UsageError) -> WebOptions {
        var options = WebOptions()
        options.insecureOpen = arguments.flag("--insecure-open")
        options.maxUploadBytes = try arguments.int("--max-upload-bytes", range: 1024...(1 << 32)) ?? options.maxUploadBytes
        options.maxUploadFiles = try arguments.int("--max-upload-files", range: 1...10_000) ?? options.maxUploadFiles
        options.requestSeconds = try arguments.int("--request-seconds", range: 1...3600) ?? options.requestSeconds
        for address in arguments.strings("--trusted-proxy") {
            guard WebServer.isNumericAddress(address) else {
                throw UsageError(message: "--trusted-proxy \(address): not a numeric IPv4 or IPv6 address")
            }
            options.trustedProxies.insert(address)
        }
        return options
    }

    /// The webhook from --webhook and its secret file, started on the store; nil without --webhook.
    static func webhook(_ arguments: ParsedArguments, storePath: String) throws -> Webhook? {
        guard let url = arguments.string("--webhook") else { return nil }
        guard let secretFile = arguments.string("--webhook-secret-file") else {
            throw CommandFailure(.usage, "--webhook needs --webhook-secret-file (the key its signature is made with)")
        }
        var secret: [UInt8]
        do {
            secret = try FileSystem.read(secretFile, limit: 4096)
        } catch {
            throw CommandFailure(.config, "cannot read the webhook secret \(secretFile): \(error)")
        }
        while let last = secret.last, last == 10 || last == 13 || last == 32 { secret.removeLast() }
        guard !secret.isEmpty else { throw CommandFailure(.config, "the webhook secret file \(secretFile) is empty") }
        do {
            let webhook = try Webhook(url: url, secret: secret)
            webhook.start(storePath: storePath)
            return webhook
        } catch {
            throw CommandFailure(.usage, error.message)
        }
    }

    static func server(listen: String, storePath: String, options: WebOptions, webhook: Webhook?) throws -> WebServer {
        var options = options
        // One pool of store readers for the API and IIIF; one renderer and one image cache for IIIF and the page
        // API's images. The pool threads and the image threads each hold at most one reader at a time.
        let readers = StoreReaders(path: storePath, keptReaders: max(1, options.threads) + max(1, options.imageThreads))
        let iiif = IIIFService(readers: readers)
        options.pageImage = { page in
            do throws(PageImageError) {
                let image = try iiif.browserImage(of: page)
                return .success(PageImageAnswer(bytes: image.bytes, mediaType: image.mediaType))
            } catch {
                return .failure(PageImageRefusal(status: error.pageStatus ?? error.status, reason: error.reason))
            }
        }
        options.iiif = { request in
            // The links in IIIF JSON are absolute: built from the Host the client asked for (plain host:port
            // characters only; anything else falls back to the listen address).
            let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]")
            let asked = request.header("host") ?? ""
            let host = !asked.isEmpty && asked.count <= 255 && asked.allSatisfy({ allowed.contains($0) }) ? asked : listen
            return iiif.respond(method: request.method, path: String(request.path.dropFirst("/iiif".count)),
                                query: request.query, baseURL: "http://\(host)/iiif")
        }
        do {
            return try WebServer(listen: listen, storePath: storePath, readers: readers, options: options, webhook: webhook)
        } catch {
            throw CommandFailure(.unavailable, error.message)
        }
    }
}

/// `ocrfarm serve`: the HTTP API (docs/api.md), /metrics and the document-done webhook over a store.
struct ServeCommand: Command {
    static let name = "serve"
    static let abstract = "Serve the store over HTTP: the JSON API, renderings, search, uploads, /metrics, a webhook."
    static let arguments = ""
    static let options: [OptionSpec] = [
        StoreOption.spec,
        OptionSpec("--listen", value: "ADDR", "Where to answer, HOST:PORT (default: 127.0.0.1:8080)."),
    ] + WebServeOptions.specs + LogOptions.specs
    static let discussion = """
    Reads the store through read-only connections (one per server thread at most), so a coordinator's writes
    never wait; writes (POST /api/submit, /api/requeue, /api/delete) open the store for that request only.
    The endpoints and their JSON are in docs/api.md.

    Access: reads from loopback need no token; from elsewhere they need a token (ocrfarm token create) unless
    --insecure-open. Writes always need an admin token, as `Authorization: Bearer TOKEN` (never a cookie, so a
    page on another site cannot make a browser write). A --listen beyond loopback is refused while no token exists,
    unless --insecure-open.

    Uploads are written to uploads/ beside the store, under names made from theirs (letters, digits, . - _).

    --webhook URL posts {event, document_id, name, pages, done, failed} for each document that finishes, with
    X-Ocrfarm-Signature: sha256=HMAC-SHA256(secret, body) in hex, retried with backoff (0.5 s doubling, 8 tries).

    Exit status: 0 stopped by SIGTERM or SIGINT; 64 bad usage; 66 no store; 69 the address cannot be used or a
    listen beyond loopback without a token; 78 a bad webhook secret file.
    """

    let storePath: String
    let listen: String
    let arguments: ParsedArguments
    let web: WebOptions

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard arguments.positionals.isEmpty else { throw UsageError(message: "serve takes no arguments") }
        storePath = StoreOption.path(arguments)
        listen = arguments.string("--listen") ?? "127.0.0.1:8080"
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]), (0...65535).contains(port) else {
            throw UsageError(message: "--listen takes HOST:PORT, e.g. 127.0.0.1:8080, not '\(listen)'")
        }
        web = try WebServeOptions.options(arguments)
        try LogOptions.apply(arguments, role: "serve")
        self.arguments = arguments
    }

    func run() throws -> ExitStatus {
        Shutdown.install()
        // The store must exist and be an ocrfarm store: said at once, not on the first request.
        _ = try Store(path: storePath, readOnly: true)
        let webhook = try WebServeOptions.webhook(arguments, storePath: storePath)
        defer { webhook?.stop() }
        let server = try WebServeOptions.server(listen: listen, storePath: storePath, options: web, webhook: webhook)
        defer { server.stop() }
        Log.info("serving", ["url": "http://\(server.address)/", "store": storePath])
        // The address as bound (port 0 picks one): on stdout, for scripts and tests.
        Console.out("listening on http://\(server.address)/\n")
        while Shutdown.requested == nil { Clock.sleep(milliseconds: 100) }
        return .success
    }
}
