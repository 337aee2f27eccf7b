import FarmCore
import FarmRuntime
import FarmStore
import Leptonica
import MicroHTTPD

/// The IIIF tree of a store, answered over HTTP: `ocrfarm serve` routes `/iiif/...` here.
///
///     {base}/{document id}/manifest                   Presentation 3.0 manifest
///     {base}/{document id}/annotations/{page id}      the page's text, line by line (AnnotationPage)
///     {base}/{document id}/search?q=…                 Content Search 2.0
///     {base}/image/{page id}/info.json                Image API 3.0 (level 1), and
///     {base}/image/{page id}/{region}/{size}/{rotation}/{quality}.{format}
///
/// Reads the store through `StoreReaders` (one reader per request at a time; `ocrfarm serve` shares its pool with
/// the API's). Owns the image cache. Thread-safety: `respond` may be called from any number of threads at once (the
/// readers and `PageImages` guard themselves).
public final class IIIFService: Sendable {
    public var storePath: String { readers.path }
    let readers: StoreReaders
    let images: PageImages

    public init(readers: StoreReaders, images: PageImages = PageImages()) {
        self.readers = readers
        self.images = images
        // An old store's page file, read for the first time, gets its hash recorded (a store of its own for that
        // one write: the readers are read-only), so every later read checks it. A store this process may not
        // write keeps none; the file is still read as it is, as before.
        let path = readers.path
        images.recordHash = { source, read in
            do {
                try Store(path: path, busyTimeoutMilliseconds: 2000).recordSourceHash(of: source, read: read)
            } catch {
                Log.warning("cannot record a page file's hash", ["file": source.path.description, "error": "\(error)"])
            }
        }
    }

    /// Readers of its own (four kept), waiting up to 10 s for a lock.
    public convenience init(storePath: String, images: PageImages = PageImages()) {
        self.init(readers: StoreReaders(path: storePath, keptReaders: 4, busyTimeoutMilliseconds: 10_000), images: images)
    }

    /// Runs `body` with a read-only store from the pool, in one snapshot.
    func withStore<T>(_ body: (Store) throws -> T) throws -> T { try readers.read(body) }

    /// Answers one request. `path` is what follows the tree's prefix (`/12/manifest`); `baseURL` is the tree's URL
    /// as clients reach it (`http://127.0.0.1:8080/iiif`), which every id in the answers starts with.
    public func respond(method: String, path: String, query: [String: String], baseURL: String) -> HTTPResponse {
        guard method == "GET" || method == "HEAD" else {
            return Self.text(405, "IIIF is read-only: GET or HEAD\n", extra: [("Allow", "GET, HEAD")])
        }
        let links = IIIFLinks(base: baseURL)
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        do {
            if parts.first == "image" { return try image(Array(parts.dropFirst()), links: links) }
            guard parts.count >= 2, let document = Self.identifier(parts[0]).map({ DocumentID($0) }) else {
                return Self.notFound(path)
            }
            switch (parts.count, parts[1]) {
            case (2, "manifest"): return try manifest(document, links: links)
            case (3, "annotations"):
                guard let page = Self.identifier(parts[2]).map({ PageID($0) }) else { return Self.notFound(path) }
                return try annotations(page, document: document, links: links)
            case (2, "search"): return try search(document, query: query, links: links)
            default: return Self.notFound(path)
            }
        } catch {
            return Self.text(503, "the store cannot be read: \(error)\n")
        }
    }

    // MARK: Presentation

    func manifest(_ document: DocumentID, links: IIIFLinks) throws -> HTTPResponse {
        let json = try withStore { store -> JSON? in
            guard let record = try store.iiifDocument(document) else { return nil }
            return Presentation.manifest(record, canvases: try store.iiifCanvases(of: document), links: links)
        }
        guard let json else { return Self.text(404, "no document \(document)\n") }
        return Self.json(json, profile: Presentation.context)
    }

    func annotations(_ page: PageID, document: DocumentID, links: IIIFLinks) throws -> HTTPResponse {
        let json = try withStore { store -> JSON? in
            guard try store.document(of: page) == document, let text = try store.canvasText(of: page) else { return nil }
            return Presentation.annotationPage(text, page: page, document: document, links: links)
        }
        guard let json else { return Self.text(404, "no text of page \(page) in document \(document)\n") }
        return Self.json(json, profile: Presentation.context)
    }

    // MARK: Content Search

    func search(_ document: DocumentID, query: [String: String], links: IIIFLinks) throws -> HTTPResponse {
        let text = query["q"] ?? ""
        let id = links.search(document) + "?q=" + ContentSearch.percentEncoded(text)
        let hits = try withStore { store -> [ContentSearch.Hit]? in
            guard try store.iiifDocument(document) != nil else { return nil }
            // An empty or malformed query finds nothing (Content Search has no error response for it).
            guard let parsed = try? SearchQuery(text) else { return [] }
            let terms = ContentSearch.wanted(parsed.expression)
            var hits: [ContentSearch.Hit] = []
            for found in try store.search(parsed, documents: [document], limit: ContentSearch.maxPages).hits {
                guard let page = try store.canvasText(of: found.page) else { continue }
                hits += ContentSearch.hits(in: page, page: found.page, terms: terms)
                if hits.count >= ContentSearch.maxHits { break }
            }
            return Array(hits.prefix(ContentSearch.maxHits))
        }
        guard let hits else { return Self.text(404, "no document \(document)\n") }
        return Self.json(ContentSearch.response(id: id, hits: hits, document: document, links: links),
                         profile: Presentation.searchContext)
    }

    // MARK: Image API

    func image(_ parts: [String], links: IIIFLinks) throws -> HTTPResponse {
        // An unknown identifier is 404 before anything else of the request is looked at (the validator's order).
        guard let first = parts.first, let page = Self.identifier(first).map({ PageID($0) }),
              parts.count == 1 || parts.count == 2 || parts.count == 5
        else { return Self.notFound("/image/" + parts.joined(separator: "/")) }
        guard let source = try withStore({ try $0.source(of: page) }) else { return Self.text(404, "no page \(page)\n") }
        let service = links.imageService(page)
        if parts.count == 1 {
            return HTTPResponse(status: 303, body: [], headers: Self.cors + [("Location", service + "/info.json")])
        }
        if parts.count == 2 && parts[1] != "info.json" { return Self.notFound(service + "/" + parts[1]) }
        let readSize = source.kind == .pdf ? try withStore({ try $0.readSize(of: page) }) : nil
        let decoded: Pix
        do {
            decoded = try images.image(of: page, source: source, readSize: readSize)
        } catch {
            return Self.text(error.status, "page \(page) has no image: \(error.reason)\n")
        }
        if parts.count == 2 {
            return Self.json(ImageInfo.json(id: service, width: decoded.width, height: decoded.height), profile: Presentation.imageContext)
        }
        let request: ImageRequest
        do {
            request = try ImageRequest(region: parts[1], size: parts[2], rotation: parts[3], qualityAndFormat: parts[4],
                                       imageWidth: decoded.width, imageHeight: decoded.height)
        } catch {
            return Self.text(400, "bad image request: \(error.reason)\n")
        }
        do {
            let bytes = try PageImages.rendered(request, from: decoded)
            return HTTPResponse(status: 200, body: bytes, headers: Self.cors + [
                ("Content-Type", request.format.mediaType),
                ("Link", "<http://iiif.io/api/image/3/level1.json>;rel=\"profile\""),
            ])
        } catch {
            return Self.text(500, "page \(page): the image cannot be made: \(error.message)\n")
        }
    }

    // MARK: The page API's image

    /// Page `page` as a browser image (`PageImages.browserImage`), for `/api/pages/{id}/image`: the same files,
    /// checks, limits and decoded-image cache as the Image API's. Throws 404 for an unknown page, 503 when the
    /// store cannot be read.
    public func browserImage(of page: PageID) throws(PageImageError) -> BrowserImage {
        let found: (source: SourceRef, readSize: (width: Int, height: Int)?)?
        do {
            found = try withStore { store in
                guard let source = try store.source(of: page) else { return nil }
                return (source, source.kind == .pdf ? try store.readSize(of: page) : nil)
            }
        } catch {
            throw PageImageError(reason: "the store cannot be read: \(error)", status: 503)
        }
        guard let found else { throw PageImageError(reason: "no page \(page.rawValue)") }
        return try images.browserImage(of: page, source: found.source, readSize: found.readSize)
    }

    // MARK: Answers

    /// Every answer may be read by a viewer on another origin (the Image API's `cors` feature).
    static let cors: [(name: String, value: String)] = [("Access-Control-Allow-Origin", "*")]

    /// JSON-LD with the API's context as its profile (what viewers and the validator ask for).
    static func json(_ json: JSON, profile: String) -> HTTPResponse {
        HTTPResponse(status: 200, body: json.bytes,
                     headers: cors + [("Content-Type", "application/ld+json;profile=\"\(profile)\"")])
    }

    static func text(_ status: Int, _ message: String, extra: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse.text(status, message, headers: cors + extra)
    }

    static func notFound(_ path: String) -> HTTPResponse {
        // The path came from the client: shown escaped only in a text/plain answer, never reflected in HTML.
        text(404, "not found\n")
    }

    /// A store id: decimal digits only (no sign, no spaces), within Int64.
    static func identifier(_ text: String) -> Int64? {
        guard !text.isEmpty, text.count <= 18, text.allSatisfy(\.isASCIIDigit) else { return nil }
        return Int64(text)
    }
}
