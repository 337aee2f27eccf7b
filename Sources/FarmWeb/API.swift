#if canImport(Glibc)
import Glibc
#endif
import Crypto
import FarmCore
import FarmIngest
import FarmRender
import FarmRuntime
import FarmStore
import MicroHTTPD

/// The routes of `ocrfarm serve` (docs/api.md): JSON reads of the store, renderings, page images, search,
/// `/metrics`, and the admin writes (submit, requeue, delete).
///
/// Every answer gets the security headers (`secured`). No part of a URL is ever used as a file name: images are
/// the files the store names for a page, uploads are written under names this code makes.
final class API: Sendable {
    /// The store's readers: every read of a request is one snapshot of one of them.
    let readers: StoreReaders
    let options: WebOptions
    let webhook: Webhook?
    let metrics: MetricsCounters
    /// The dashboard's polled answers, made at most once a second however many browsers poll.
    let status = OncePerSecond()

    init(readers: StoreReaders, options: WebOptions, webhook: Webhook?) {
        self.readers = readers
        self.options = options
        self.webhook = webhook
        self.metrics = MetricsCounters()
    }

    static let renderings = ["hocr", "alto", "page", "json", "pdf", "text"]

    /// The headers every answer carries: no script or style from anywhere but this server and none inline, no
    /// content sniffing, no framing, no referrer; API answers are not cached.
    static func secured(_ response: HTTPResponse) -> HTTPResponse {
        var response = response
        response.headers += [
            ("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"),
            ("X-Content-Type-Options", "nosniff"),
            ("X-Frame-Options", "DENY"),
            ("Referrer-Policy", "no-referrer"),
            ("Cache-Control", "no-store"),
        ]
        return response
    }

    // MARK: Routing

    func answer(_ request: HTTPRequest) -> HTTPResponse {
        // libmicrohttpd has percent-decoded the path: "%2e%2e" arrives as "..". No route takes such a segment, and
        // none maps a segment to a file, but say so plainly instead of 404.
        let segments = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        if segments.contains(where: { $0 == ".." || $0 == "." || $0.contains("\0") || $0.contains("\\") }) {
            return Self.error(400, "a path segment '..' or '.' is not allowed")
        }
        // The server leaves %00 undecoded (a decoded NUL would end the path before this check could see it).
        if request.path.contains("%00") { return Self.error(400, "a NUL (%00) in the path is not allowed") }
        if segments.first == "iiif" {
            guard let iiif = options.iiif else { return Self.error(404, "IIIF is not served by this build") }
            if let refused = authorize(request, write: false) { return refused }
            return iiif(request)
        }
        let isWrite = request.method == "POST"
        guard request.method == "GET" || request.method == "HEAD" || isWrite else {
            return Self.error(405, "only GET, HEAD and POST", headers: [("Allow", "GET, HEAD, POST")])
        }
        if !isWrite, let asset = ui(segments) { return asset }
        if let refused = authorize(request, write: isWrite) { return refused }
        do {
            switch (request.method, segments.first ?? "", segments.dropFirst().first) {
            case ("POST", "api", let name?) where segments.count == 2:
                switch name {
                case "submit": return try submit(request)
                case "requeue": return try requeue(request)
                case "delete": return try delete(request)
                case "metadata": return try setMetadata(request)
                default: return Self.error(404, "no such write: /api/\(name)")
                }
            case ("POST", _, _):
                return Self.error(404, "writes are POST /api/submit, /api/requeue, /api/delete, /api/metadata")
            case (_, "metrics", nil):
                return try metricsText()
            case (_, "api", _):
                return try read(Array(segments.dropFirst()), request)
            default:
                return Self.error(404, "not found; the API is under /api/ (docs/api.md)")
            }
        } catch let error as RequestError {
            return Self.error(400, error.description)
        } catch let error as SearchQueryError {
            return Self.error(400, "bad query: \(error)")
        } catch {
            return Self.error(500, "\(error)")
        }
    }

    /// `/`, `/favicon.ico` and `/ui/{app.js,app.css,favicon.svg}`: the dashboard and viewer (Assets.swift). They
    /// hold no store data, so they are served without a token (a browser cannot send one for a page it opens); every
    /// API call the page makes carries the token the user typed, as a Bearer header.
    private func ui(_ segments: [String]) -> HTTPResponse? {
        let name: String
        switch segments.count {
        case 1 where segments[0].isEmpty: name = "index.html"
        // Browsers ask for /favicon.ico by themselves (a bookmark, a page that is not the UI's): the same icon.
        case 1 where segments[0] == "favicon.ico": name = "favicon.svg"
        case 2 where segments[0] == "ui": name = segments[1]
        default: return nil
        }
        guard let file = Assets.file(name) else { return Self.error(404, "no such file: /ui/\(name)") }
        return HTTPResponse(status: 200, body: file.body, headers: [("Content-Type", file.type)])
    }

    private func read(_ path: [String], _ request: HTTPRequest) throws -> HTTPResponse {
        switch path.count {
        case 1:
            switch path[0] {
            case "status": return try status.get { Self.json(try readers.read { try $0.report().json }) }
            case "throughput": return try status.get(key: "throughput") { try throughput() }
            case "documents": return try documents(request)
            case "search": return try search(request)
            default: break
            }
        case 2, 3:
            guard let id = Int64(path[1]), id > 0 else { return Self.error(404, "'\(path[1])' is not an id") }
            if path[0] == "documents" && path.count == 3 && path[2] == "pages" {
                return try pages(of: DocumentID(id), request)
            }
            if path[0] == "pages" && path.count == 2 { return try page(PageID(id)) }
            if path[0] == "pages" && path[2] == "image" { return try image(PageID(id)) }
            if path[0] == "pages" && Self.renderings.contains(path[2]) { return try rendering(path[2], of: PageID(id)) }
        default: break
        }
        return Self.error(404, "no such resource: /api/\(path.joined(separator: "/"))")
    }

    // MARK: Access

    /// nil when the request may go on; otherwise the refusal. Writes need an admin token (401 without one, 403
    /// with a read token); reads need a token unless from loopback or the server is open (`--insecure-open`). A
    /// token that is wrong or revoked is 401 even where none is needed, so a client learns its token is bad.
    /// Only the Authorization header counts, never a cookie: a page from another site cannot make a browser
    /// send it, which is the CSRF protection.
    func authorize(_ request: HTTPRequest, write: Bool) -> HTTPResponse? {
        let challenge = [("WWW-Authenticate", "Bearer realm=\"ocrfarm\"")]
        var role: TokenRole?
        if let header = request.header("authorization") {
            let parts = header.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else {
                return Self.error(401, "Authorization must be 'Bearer TOKEN'", headers: challenge)
            }
            let token = parts[1].trimmingSpaces
            do {
                role = try readers.read { try Tokens.role(of: token, in: $0) }
            } catch {
                return Self.error(500, "\(error)")
            }
            guard role != nil else { return Self.error(401, "unknown or revoked token", headers: challenge) }
        }
        if write {
            guard let role else { return Self.error(401, "writes need an admin token (Authorization: Bearer …)", headers: challenge) }
            guard role == .admin else { return Self.error(403, "this token may only read; writes need an admin token") }
            return nil
        }
        if role == nil && !clientIsLocal(request) && !options.insecureOpen {
            return Self.error(401, "reads from another machine need a token (Authorization: Bearer …)", headers: challenge)
        }
        return nil
    }

    /// Whether the client is on this machine: the peer itself, unless the peer is a trusted proxy
    /// (`--trusted-proxy`), whose last `X-Forwarded-For` entry is the client it saw (entries before it came from the
    /// client and prove nothing); through such a proxy without the header, another machine. The header from any
    /// other peer is ignored: anyone can send it.
    func clientIsLocal(_ request: HTTPRequest) -> Bool {
        guard options.trustedProxies.contains(request.peerAddress) else { return request.peerIsLoopback }
        guard let forwarded = request.header("x-forwarded-for")?.split(separator: ",").last.map({ String($0).trimmingSpaces }),
              !forwarded.isEmpty else { return false }
        return HTTPRequest(method: request.method, path: request.path, peerAddress: forwarded).peerIsLoopback
    }

    // MARK: Reads

    private func limit(_ request: HTTPRequest, default value: Int, max most: Int) throws -> Int {
        guard let text = request.query["limit"] else { return value }
        guard let limit = Int(text), limit > 0 else { throw RequestError("limit must be a positive number") }
        return min(limit, most)
    }

    /// `/api/documents?limit=&after=`: documents in id order after the cursor, each with its pages by state and
    /// its quality; `next` is the cursor of the following page (null at the end). Keyed by id, and one row of
    /// `document_counts` per document (schema 12), so any page of a million documents costs the same however
    /// many pages they have.
    private func documents(_ request: HTTPRequest) throws -> HTTPResponse {
        let limit = try limit(request, default: 50, max: 500)
        let after = try request.query["after"].map { text -> DocumentID in
            guard let id = Int64(text) else { throw RequestError("after must be a document id") }
            return DocumentID(id)
        }
        return Self.json(try readers.read { store in
            let summaries = try store.documentSummaries(after: after, limit: limit)
            let items: [JSON] = summaries.map { summary in
                let (document, pages) = (summary.document, summary.pages)
                let finished = pages[.done] + pages[.failed]
                return .object([
                    ("id", JSON(Int(document.id.rawValue))), ("name", JSON(document.name)),
                    ("page_count", JSON(document.pageCount)),
                    ("submitted_at", JSON(Clock.iso8601(document.submittedAt))),
                    ("pages", pages.json),
                    ("progress", .rounded(pages.total == 0 ? 1 : Double(finished) / Double(pages.total), places: 3)),
                    ("quality", .object([
                        ("measured", JSON(summary.qualityMeasured)),
                        ("mean", summary.qualityMean.map { .rounded($0, places: 3) } ?? .null),
                        ("min", summary.qualityMin.map { .rounded($0, places: 3) } ?? .null),
                    ])),
                ])
            }
            return .object([
                ("documents", .array(items)),
                ("next", summaries.count == limit ? summaries.last.map { JSON(Int($0.document.id.rawValue)) } ?? .null : .null),
            ])
        })
    }

    /// `/api/documents/{id}/pages?limit=&after=`: the document's pages after page number `after`.
    private func pages(of document: DocumentID, _ request: HTTPRequest) throws -> HTTPResponse {
        let limit = try limit(request, default: 100, max: 1000)
        let after = try request.query["after"].map { text -> Int in
            guard let number = Int(text) else { throw RequestError("after must be a page number") }
            return number
        } ?? 0
        return try readers.read { store in
            guard let record = try store.document(document) else { return Self.error(404, "no document \(document.rawValue)") }
            let pages = try store.pages(of: document, after: after, limit: limit)
            let metadata = try store.metadata(of: document)
            let items: [JSON] = try pages.map { page in
                let measured = try store.measures(of: page.id)
                return .object([
                    ("id", JSON(Int(page.id.rawValue))), ("number", JSON(page.number)), ("state", JSON(page.state.rawValue)),
                    ("attempts", JSON(page.attempts)),
                    ("failure", page.failureCode.map { .object([("code", JSON($0)), ("message", JSON(page.failureMessage))]) } ?? .null),
                    ("quality", measured?.quality.map { .rounded($0, places: 3) } ?? .null),
                    ("mean_confidence", measured.map { .rounded($0.meanConfidence, places: 1) } ?? .null),
                ])
            }
            return Self.json(.object([
                ("document", .object([("id", JSON(Int(record.id.rawValue))), ("name", JSON(record.name)),
                                      ("page_count", JSON(record.pageCount)), ("metadata", Self.json(metadata))])),
                ("pages", .array(items)),
                ("next", pages.count == limit ? pages.last.map { JSON($0.number) } ?? .null : .null),
            ]))
        }
    }

    /// `/api/pages/{id}`: the page, its result (text, confidence, size, quality, the worker's structure) and its
    /// page JSON rendering (lines and words with boxes, confidences, alternatives when stored, and the transform
    /// from the read image back to the original), neighbours for next/previous, and links.
    private func page(_ id: PageID) throws -> HTTPResponse {
        try readers.read { store in
            guard let page = try store.page(id) else { return Self.error(404, "no page \(id.rawValue)") }
            let document = try store.document(page.document)
            let source = try store.source(of: id)
            let result = try store.resultSummary(of: id).map { result -> JSON in
                .object([
                    ("engine", JSON(result.engine)), ("text", JSON(result.text)),
                    ("mean_confidence", .rounded(result.meanConfidence, places: 1)),
                    ("width", JSON(result.width)), ("height", JSON(result.height)),
                    ("quality", result.quality.map { .rounded($0, places: 3) } ?? .null),
                    ("structure", result.structure ?? .null),
                    ("finished_at", JSON(Clock.iso8601(result.finishedAt))),
                ])
            }
            var names = try store.artifactNames(of: id).sorted()
            if try store.hasModel(id) {
                names = Set(names + PageArtifacts.renderedOnDemand.map(\.rawValue)).sorted()
            }
            let pageJSON = try Self.stored("json", of: id, in: store).flatMap { try? JSON.parse($0) }
            let previous = try store.page(numbered: page.number - 1, in: page.document).map { Int($0.rawValue) }
            let next = try store.page(numbered: page.number + 1, in: page.document).map { Int($0.rawValue) }
            let base = "/api/pages/\(id.rawValue)"
            return Self.json(.object([
                ("id", JSON(Int(id.rawValue))),
                ("document", .object([("id", JSON(Int(page.document.rawValue))), ("name", JSON(document?.name))])),
                ("number", JSON(page.number)), ("state", JSON(page.state.rawValue)), ("attempts", JSON(page.attempts)),
                ("failure", page.failureCode.map { .object([("code", JSON($0)), ("message", JSON(page.failureMessage))]) } ?? .null),
                ("source", source.map { .object([("path", JSON($0.path.description)), ("index", JSON($0.index)),
                                                  ("kind", JSON($0.kind.rawValue))]) } ?? .null),
                ("result", result ?? .null),
                ("page", pageJSON ?? .null),
                ("previous", JSON(previous)), ("next", JSON(next)),
                ("links", .object([("image", JSON(base + "/image"))] + names.map { ($0, JSON(base + "/" + $0)) }
                                  + (result == nil ? [] : [("text", JSON(base + "/text"))]))),
            ]))
        }
    }

    /// A page's rendering named `name`, stored else rendered from its model (`PageRenderings`, as `export` finds
    /// it): the bytes `export` writes.
    static func stored(_ name: String, of id: PageID, in store: Store) throws -> [UInt8]? {
        guard let format = OutputFormat(rawValue: name) else { return try store.artifact(name, of: id) }
        let renderings = PageRenderings([format], stored: try store.artifactNames(of: id))
        var rendered: [OutputFormat: [UInt8]] = [:]
        if !renderings.fromModel.isEmpty, let model = try store.model(of: id) { rendered = renderings.rendered(from: model) }
        return try PageRenderings.rendering(format, rendered: rendered) { try store.artifact(name, of: id) }
    }

    /// `/api/pages/{id}/{hocr|alto|page|json|pdf|text}`: a stored rendering or one rendered from the page's model,
    /// or the page text.
    private func rendering(_ name: String, of id: PageID) throws -> HTTPResponse {
        let found: [UInt8]? = try readers.read { store in
            name == "text" ? try store.text(of: id).map { Array($0.utf8) } : try Self.stored(name, of: id, in: store)
        }
        guard let found else { return Self.error(404, "page \(id.rawValue) has no \(name) rendering (not read yet, or failed)") }
        let type = switch name {
        case "hocr": "application/xhtml+xml; charset=utf-8"
        case "alto", "page": "application/xml; charset=utf-8"
        case "json": "application/json; charset=utf-8"
        case "pdf": "application/pdf"
        default: "text/plain; charset=utf-8"
        }
        // hOCR is XHTML: shown inline it could run script a page's text smuggled in; the CSP forbids script
        // anyway, and as an attachment it is never rendered as this site's page.
        return HTTPResponse(status: 200, body: found, headers: [
            ("Content-Type", type), ("Content-Disposition", "attachment; filename=\"page-\(id.rawValue).\(name == "text" ? "txt" : name == "page" ? "page.xml" : name)\""),
        ])
    }

    /// `/api/pages/{id}/image`: the page as a browser image (PNG or JPEG) whatever its source (a PDF page, a TIFF
    /// frame, JPEG 2000, PNG, JPEG…), made by the renderer `WebOptions.pageImage` names (IIIF's), from the file the
    /// store names for the page, checked against its recorded size and SHA-256; or the page's stored PNG when an
    /// older store has one.
    private func image(_ id: PageID) throws -> HTTPResponse {
        if let png = try readers.read({ try $0.artifact("png", of: id) }) {
            return HTTPResponse(status: 200, body: png, headers: [("Content-Type", "image/png")])
        }
        guard let make = options.pageImage else { return Self.error(404, "page images are not served by this server") }
        switch make(id) {
        case .success(let image):
            return HTTPResponse(status: 200, body: image.bytes, headers: [("Content-Type", image.mediaType)])
        case .failure(let refusal):
            return Self.error(refusal.status, "page \(id.rawValue) has no image: \(refusal.reason)")
        }
    }

    /// `/api/search?q=&limit=&document=`: the query language of `ocrfarm search`, hits ranked (bm25) with their
    /// snippet as segments, each marked as a match or not, for the client to put in the page as text.
    private func search(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let text = request.query["q"], !text.trimmingSpaces.isEmpty else { throw RequestError("q= is the query") }
        let query = try SearchQuery(text)
        let limit = try limit(request, default: 20, max: 100)
        let scope = try request.query["document"].map { text -> [DocumentID] in
            guard let id = Int64(text) else { throw RequestError("document must be a document id") }
            return [DocumentID(id)]
        }
        return Self.json(try readers.read { store in
            guard try store.hasSearchIndex else { throw RequestError("this store has no search index yet") }
            let results = try store.search(query, documents: scope, limit: limit)
            let named = scope == nil ? try store.documents(matchingName: query, limit: 10) : []
            return .object([
                ("query", JSON(text)),
                ("total", JSON(results.total)),
                ("order", JSON(results.order.rawValue)),
                ("hits", .array(results.hits.map { hit in
                    .object([
                        ("page_id", JSON(Int(hit.page.rawValue))),
                        ("document", .object([("id", JSON(Int(hit.document.rawValue))), ("name", JSON(hit.documentName))])),
                        ("page", JSON(hit.number)),
                        ("score", JSON(hit.score)),
                        ("snippet", .array(Self.segments(hit.snippet).map { .object([("text", JSON($0.text)), ("match", JSON($0.match))]) })),
                    ])
                })),
                ("documents", .array(try named.map { document in
                    .object([("id", JSON(Int(document.id.rawValue))), ("name", JSON(document.name)),
                             ("metadata", Self.json(try store.metadata(of: document.id)))])
                })),
            ])
        })
    }

    /// `/api/throughput`: pages finished per minute over the last hour (oldest first, 60 values, the last one the
    /// minute now running) and per hour over the last day (24, each 60 such minutes), for the dashboard's chart;
    /// added up from `result_minutes` (schema 10, results counted per minute of `finished_at` by triggers), so it
    /// reads at most 1,440 small rows however many results the day had.
    private func throughput() throws -> HTTPResponse {
        let now = Clock.now
        return Self.json(try readers.read { store in
            let minute = Int64((now / 60).rounded(.down))
            var perMinute = [Int](repeating: 0, count: 60)
            var perHour = [Int](repeating: 0, count: 24)
            func add(_ count: Int, minutesAgo ago: Int64) {
                guard ago >= 0 && ago < 1440 else { return }
                if ago < 60 { perMinute[59 - Int(ago)] += count }
                perHour[23 - Int(ago / 60)] += count
            }
            for (at, count) in try store.finishedPerMinute((minute - 1439)...minute) { add(count, minutesAgo: minute - at) }
            return .object([
                ("generated_at", JSON(Clock.iso8601(now))),
                ("per_minute", .array(perMinute.map { JSON($0) })),
                ("per_hour", .array(perHour.map { JSON($0) })),
            ])
        })
    }

    /// The snippet cut at the match marks: plain text and matches, in order.
    static func segments(_ snippet: String) -> [(text: String, match: Bool)] {
        var out: [(text: String, match: Bool)] = []
        var current = ""
        var inMatch = false
        for character in snippet {
            if character == SearchHit.markStart || character == SearchHit.markEnd {
                if !current.isEmpty { out.append((current, inMatch)) }
                current = ""
                inMatch = character == SearchHit.markStart
            } else {
                current.append(character)
            }
        }
        if !current.isEmpty { out.append((current, inMatch)) }
        return out
    }

    private func metricsText() throws -> HTTPResponse {
        let text = try readers.read { store in try metrics.render(store) }
        return .text(200, text, contentType: "text/plain; version=0.0.4; charset=utf-8")
    }

    // MARK: Writes

    /// A writable connection for one write: opened per request, as `ocrfarm requeue` does, so the server holds
    /// no write lock between requests.
    private func writer() throws -> Store { try Store(path: readers.path) }

    private func body(_ request: HTTPRequest) throws -> JSON {
        guard !request.body.isEmpty else { return .object([]) }
        guard let json = try? JSON.parse(request.body), json.objectValue != nil else {
            throw RequestError("the body must be a JSON object")
        }
        return json
    }

    /// POST /api/requeue {failed, stuck, code, document, pages, dry_run}: `ocrfarm requeue`'s selection; at least
    /// one selector. The dry run answers the count and the first pages; the requeue moves them in one
    /// transaction, where a running coordinator finds them queued.
    private func requeue(_ request: HTTPRequest) throws -> HTTPResponse {
        let body = try body(request)
        var selection = RequeueSelection()
        selection.failed = body["failed"]?.boolValue ?? false
        selection.stuck = body["stuck"]?.boolValue ?? false
        selection.code = body["code"]?.stringValue ?? body["reason"]?.stringValue
        if let document = body["document"] {
            guard let id = document.intValue else { throw RequestError("document must be a document id") }
            selection.documents = [DocumentID(Int64(id))]
        }
        if let pages = body["pages"] {
            guard let ids = pages.arrayValue?.compactMap(\.intValue), ids.count == pages.arrayValue?.count else {
                throw RequestError("pages must be a list of page ids")
            }
            selection.pages = ids.map { PageID(Int64($0)) }
        }
        guard !selection.isEmpty else { throw RequestError("say what to requeue: failed, stuck, code, document or pages") }
        let dryRun = body["dry_run"]?.boolValue ?? false
        let now = Clock.now
        let (listed, preview, liveness) = try readers.read { store in
            let liveness = try store.liveness()
            let (listed, preview) = try store.requeueCandidates(selection, liveness: liveness, now: now, limit: 20)
            return (listed, preview, liveness)
        }
        let summary = dryRun || preview.total == 0 ? preview : try writer().requeue(selection, liveness: liveness, now: Clock.now)
        return Self.json(.object([
            ("dry_run", JSON(dryRun)),
            (dryRun ? "would_requeue" : "requeued", JSON(summary.total)),
            ("by_code", .array(summary.codes.map { .object([("code", JSON($0.code)), ("count", JSON($0.count))]) })),
            ("examples", .array(listed.map {
                .object([("page_id", JSON(Int($0.page.rawValue))), ("document", JSON($0.document)), ("page", JSON($0.number)),
                         ("state", JSON($0.state.rawValue)), ("code", JSON($0.code))])
            })),
        ]))
    }

    /// POST /api/delete {document, dry_run}: `ocrfarm delete` of one document by id.
    private func delete(_ request: HTTPRequest) throws -> HTTPResponse {
        let body = try body(request)
        guard let id = body["document"]?.intValue else { throw RequestError("document (an id) is required") }
        let dryRun = body["dry_run"]?.boolValue ?? false
        guard try readers.read({ try $0.document(DocumentID(Int64(id))) }) != nil else {
            return Self.error(404, "no document \(id)")
        }
        let report: DeleteReport
        do {
            report = try writer().delete([DocumentID(Int64(id))], dryRun: dryRun)
        } catch let refusal as DeleteRefusal {
            return Self.error(409, "not deleted: \(refusal)")
        }
        if !dryRun { for file in report.splitFiles { FileSystem.remove(file.description) } }
        return Self.json(.object([
            ("dry_run", JSON(dryRun)), ("documents", JSON(report.documents)), ("pages", JSON(report.pages)),
            ("results", JSON(report.results)),
        ]))
    }

    /// POST /api/metadata {document, title, date, creator, identifier, shelfmark}: sets the fields given (a string
    /// each; "" clears one) and keeps the others; answers the document's fields as stored. A value too long, with
    /// a control character, or a date that is not YYYY[-MM[-DD]] is refused (400) and nothing is changed.
    private func setMetadata(_ request: HTTPRequest) throws -> HTTPResponse {
        let body = try body(request)
        guard let id = body["document"]?.intValue, id > 0 else { throw RequestError("document (an id) is required") }
        let fields = DocumentMetadata.Field.allCases.map(\.rawValue)
        if let unknown = body.objectValue?.first(where: { $0.0 != "document" && !fields.contains($0.0) }) {
            throw RequestError("no metadata field '\(unknown.0)'; the fields are \(fields.joined(separator: ", "))")
        }
        let document = DocumentID(Int64(id))
        guard try readers.read({ try $0.document(document) }) != nil else { return Self.error(404, "no document \(id)") }
        let store = try writer()
        var metadata = try store.metadata(of: document)
        for field in DocumentMetadata.Field.allCases {
            guard let value = body[field.rawValue] else { continue }
            guard let text = value.stringValue else { throw RequestError("\(field.rawValue) must be a string") }
            metadata[field] = text
        }
        let stored: DocumentMetadata?
        do {
            stored = try store.setMetadata(metadata, of: document)
        } catch let error as MetadataError {
            throw RequestError(error.description)
        }
        guard let stored else { return Self.error(404, "no document \(id)") }
        return Self.json(.object([("document", JSON(id)), ("metadata", Self.json(stored))]))
    }

    /// A document's fields as the API answers them: every field, "" when unset.
    static func json(_ metadata: DocumentMetadata) -> JSON {
        .object(DocumentMetadata.Field.allCases.map { ($0.rawValue, JSON(metadata[$0])) })
    }

    /// POST /api/submit (multipart/form-data): each file part is written under the store's folder, in
    /// uploads/<time>-<random>/ with a name made from its own (letters, digits, '.', '-', '_' only), then
    /// submitted as `ocrfarm submit` would; a `document` field names the document of a single file. A file whose
    /// content is already in the store is skipped, as `submit` skips it, and removed from the upload folder.
    private func submit(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let type = request.header("content-type"), let boundary = Multipart.boundary(type) else {
            throw RequestError("an upload is multipart/form-data")
        }
        let parts: [Multipart.Part]
        do {
            parts = try Multipart.parse(request.body, boundary: boundary, maxParts: options.maxUploadFiles + 8)
        } catch {
            throw RequestError("\(error)")
        }
        let files = parts.filter { $0.filename != nil }
        guard !files.isEmpty else { throw RequestError("no file part in the upload") }
        guard files.count <= options.maxUploadFiles else {
            return Self.error(413, "\(files.count) files; at most \(options.maxUploadFiles) in one upload")
        }
        let documentName = parts.first { $0.name == "document" && $0.filename == nil }.map { String(decoding: $0.body, as: UTF8.self) }
        let folder = FileSystem.directoryName(readers.path) + "/uploads"
        let batch = folder + "/" + String(Int(Clock.now)) + "-" + SHA256.hex(digest: try Tokens.randomBytes(6))
        if !FileSystem.isDirectory(folder) { try FileSystem.makeDirectory(folder, mode: 0o750) }
        try FileSystem.makeDirectory(batch, mode: 0o750)
        var paths: [RawPath] = []
        var used: Set<String> = []
        for (index, file) in files.enumerated() {
            var name = Multipart.safeName(file.filename ?? "")
            if used.contains(name) { name = "\(index + 1)-" + name }
            used.insert(name)
            let path = batch + "/" + name
            try FileSystem.write(file.body, to: path, mode: 0o640)
            paths.append(RawPath(path))
        }
        var options = SubmitOptions(documentName: files.count == 1 ? documentName : nil)
        options.pageOptions.engine = .defaultChoice
        let report = try Submission(store: writer(), options: options).submit(paths)
        // A file already in the store (same content) is not kept: nothing refers to it. Its folder goes when empty.
        for skipped in report.skipped { FileSystem.remove(skipped.path) }
        if report.skipped.count == paths.count { FileSystem.remove(batch) }
        return Self.json(.object([
            ("documents", .array(report.added.map {
                .object([("id", JSON(Int($0.id.rawValue))), ("name", JSON($0.name)), ("pages", JSON($0.pages)),
                         ("failed_pages", JSON($0.failedPages))])
            })),
            ("skipped", .array(report.skipped.map { .object([("file", JSON(FileSystem.baseName($0.path.description))),
                                                              ("existing", JSON($0.existing)), ("id", JSON(Int($0.id.rawValue)))]) })),
            ("invalid", .array(report.invalid.map { .object([("file", JSON(FileSystem.baseName($0.path.description))),
                                                              ("reason", JSON($0.failure.description))]) })),
        ]), status: 201)
    }

    // MARK: Answers

    /// JSON with `<`, `>` and `&` written as \u escapes: they occur only inside strings, so the value is the
    /// same, and no answer holds markup even if something were to render it as HTML.
    static func json(_ value: JSON, status: Int = 200) -> HTTPResponse {
        var text = value.rendered
        if text.contains(where: { $0 == "<" || $0 == ">" || $0 == "&" }) {
            text = text.replacing("<", with: "\\u003c").replacing(">", with: "\\u003e").replacing("&", with: "\\u0026")
        }
        return .text(status, text + "\n", contentType: "application/json; charset=utf-8")
    }

    static func error(_ status: Int, _ message: String, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        var response = json(.object([("error", JSON(message))]), status: status)
        response.headers += headers
        return response
    }
}

/// Answers kept for a second: the dashboard polls, and a hundred browsers must not mean a hundred store reads.
final class OncePerSecond: @unchecked Sendable {
    // Thread-safety: `kept` is read and written holding `mutex`; the answer is made holding it too, so callers
    // that arrive while it is made wait for it instead of making their own.
    private var mutex = pthread_mutex_t()
    private var kept: [String: (at: Int64, response: HTTPResponse)] = [:]
    private var madeCount = 0

    /// How many answers were made (store queries run) since the start: what the one-second cache saves is seen here.
    var made: Int {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return madeCount
    }

    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }

    func get(key: String = "status", _ make: () throws -> HTTPResponse) throws -> HTTPResponse {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        let now = Clock.monotonicMilliseconds
        if let kept = kept[key], now - kept.at < 1000 { return kept.response }
        let response = try make()
        madeCount += 1
        if response.status == 200 { kept[key] = (now, response) }
        return response
    }
}

/// A request the API cannot take (400).
struct RequestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension String {
    var trimmingSpaces: String {
        var text = Substring(self)
        while text.first?.isWhitespace == true { text = text.dropFirst() }
        while text.last?.isWhitespace == true { text = text.dropLast() }
        return String(text)
    }
}
