import FarmCore
import FarmIIIF
import FarmRender
import FarmRuntime
import FarmStore
import Foundation
import MicroHTTPD
import Synchronization
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A store made once by a real `ocrfarm run` (real Tesseract) on four pages: a clean scan, a scan lying on its
/// side (its words are mapped to the image by the page's homography), the IIIF validator's test image, and a
/// one-page PDF.
final class IIIFStoreFixture: Sendable {
    let folder: TemporaryDirectory
    let store: String
    let documents: [String: DocumentID]
    let pages: [String: PageID]

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Made by the first test that needs it; a failure is kept, so each test reports it.
    static let shared: Result<IIIFStoreFixture, Failure> = {
        do { return .success(try IIIFStoreFixture()) } catch { return .failure(Failure(description: "\(error)")) }
    }()

    static func get() throws -> IIIFStoreFixture { try shared.get() }

    private init() throws {
        folder = TemporaryDirectory("ocrfarm-iiif")
        let pagesFolder = folder.file("pages")
        try FileSystem.makeDirectory(pagesFolder)
        for (from, name) in [(Fixtures.packageRoot + "/Samples/pages/clean-000.png", "clean.png"),
                             (Fixtures.packageRoot + "/Samples/pages/scan-000.jpg", "sideways.jpg"),
                             (Fixtures.path("iiif/validator-squares.png"), "squares.png")] {
            try FileSystem.write(try FileSystem.read(from), to: pagesFolder + "/" + name)
        }
        // A PDF page: its image is rasterized as the workers rasterize it. It has text of its own, which
        // `--pdf-text skip` (the default) would keep instead of reading: force makes it a page read by OCR.
        try FileSystem.write(TestPDF.onePage("Rasterized for the viewer"), to: pagesFolder + "/letter.pdf")
        store = folder.file("farm.db")
        let run = try Run.ocrfarm(["run", "--store", store, "--workers", "1", "--pdf-text", "force", pagesFolder],
                                  environment: ["OMP_THREAD_LIMIT": "1"])
        guard run.status == 0 else { throw Failure(description: "ocrfarm run failed (\(run.status)): \(run.stderr)") }
        let opened = try Store(path: store, readOnly: true)
        var documents: [String: DocumentID] = [:]
        var pages: [String: PageID] = [:]
        for document in try opened.documents(after: nil, limit: 10) {
            let name = String(document.name.split(separator: "/").last ?? "")
            documents[name] = document.id
            pages[name] = try opened.pages(of: document.id, after: 0, limit: 1).first?.id
        }
        self.documents = documents
        self.pages = pages
        // Catalogue fields on one document, as an archivist sets them in the viewer: its manifest shows them.
        if let clean = documents["clean.png"] {
            _ = try Store(path: store).setMetadata(DocumentMetadata(title: "Brief an Bessel", date: "1829-05",
                                                                    creator: "Carl Friedrich Gauß", shelfmark: "Cod. Ms. Gauß 12"),
                                                   of: clean)
        }
    }
}

/// A running HTTP server answering `/iiif/...` with `IIIFService`, on a port of 127.0.0.1 the system chose.
final class IIIFTestServer {
    let server: HTTPServer
    let port: Int
    let service: IIIFService
    var base: String { "http://127.0.0.1:\(port)/iiif" }

    init(store: String, images: PageImages = PageImages()) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(bound == 0 && listen(fd, 64) == 0, "bind/listen: errno \(errno)")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        let service = IIIFService(storePath: store, images: images)
        var limits = HTTPServer.Limits()
        limits.timeoutSeconds = 10
        let base = "http://127.0.0.1:\(port)/iiif"
        server = try HTTPServer(listeningSocket: fd, limits: limits) { request in
            guard request.path.hasPrefix("/iiif/") else { return .text(404, "not here\n") }
            return service.respond(method: request.method, path: String(request.path.dropFirst(5)), query: request.query,
                                   baseURL: base)
        }
        self.port = port
        self.service = service
    }

    deinit { server.stop() }

    func get(_ path: String) throws -> HTTP.Response {
        try HTTP.request(port: port, "GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
    }

    func json(_ path: String) throws -> JSON {
        let response = try get(path)
        try #require(response.status == 200, "GET \(path): \(response.status) \(response.body)")
        return try JSON.parse(response.body)
    }
}

/// The IIIF clients' side of the checks, run with the validators' Python (iiif-prezi3, Pillow): loads every
/// manifest as a prezi3 `Manifest`, fetches every canvas's image (its size must be the body's), info.json and
/// annotation pages (each loaded as a prezi3 `AnnotationPage`), and prints what it saw as JSON. In `static` mode the
/// URLs are files under a folder instead (what a plain web server would publish).
let prezi3Check = #"""
import io, json, os, sys, urllib.request
from iiif_prezi3 import Manifest, AnnotationPage
from PIL import Image
mode, base, root = sys.argv[1], sys.argv[2], sys.argv[3]
def get(url):
    if mode == "static":
        assert url.startswith(base + "/"), url
        with open(os.path.join(root, url[len(base) + 1:]), "rb") as f:
            return f.read()
    with urllib.request.urlopen(url, timeout=30) as r:
        assert r.status == 200, (url, r.status)
        return r.read()
report = {"manifests": 0, "canvases": 0, "images": 0, "annotation_pages": 0, "lines": 0, "texts": []}
for manifest_url in sys.argv[4:]:
    data = json.loads(get(manifest_url))
    Manifest(**data)
    report["manifests"] += 1
    for canvas in data["items"]:
        report["canvases"] += 1
        for page in canvas["items"]:
            for anno in page["items"]:
                body = anno["body"]
                image = Image.open(io.BytesIO(get(body["id"])))
                assert image.format == "JPEG", (body["id"], image.format)
                assert image.size == (body["width"], body["height"]), (body["id"], image.size)
                assert (canvas["width"], canvas["height"]) == image.size
                info = json.loads(get(body["service"][0]["id"] + "/info.json"))
                assert (info["width"], info["height"]) == image.size, info
                report["images"] += 1
        for ref in canvas.get("annotations", []):
            annotations = json.loads(get(ref["id"]))
            AnnotationPage(**annotations)
            report["annotation_pages"] += 1
            for line in annotations["items"]:
                assert line["motivation"] == "supplementing"
                target, fragment = line["target"].split("#xywh=")
                assert target == canvas["id"], line["target"]
                x, y, w, h = map(int, fragment.split(","))
                assert 0 <= x and 0 <= y and x + w <= canvas["width"] and y + h <= canvas["height"], line["target"]
                report["lines"] += 1
                report["texts"].append(line["body"]["value"])
print(json.dumps(report))
"""#

@Suite("IIIF over HTTP, checked by real IIIF clients", .serialized)
struct IIIFServerTests {
    var python: String { FormatValidators.python }
    var bin: String { Fixtures.packageRoot + "/.build/validators/bin" }

    @Test("iiif-validator: Image API 3.0 level 1 passes on the validator's test image",
          .enabled(if: Capabilities.hasFormatValidators))
    func validator() throws {
        let fixture = try IIIFStoreFixture.get()
        let server = try IIIFTestServer(store: fixture.store)
        let page = try #require(fixture.pages["squares.png"])
        let validate = [bin + "/iiif-validate.py", "-s", "127.0.0.1:\(server.port)", "-p", "iiif/image", "-i", "\(page)",
                        "--version=3.0", "-v"]
        let run = try Run.process(python, validate + ["--level", "1"])
        #expect(run.status == 0, "iiif-validate.py: \(run.stderr)")
        let passed = run.stderr.split(separator: "\n").filter { $0.hasSuffix(" PASS") }.count
        #expect(passed >= 24, "level 1 of Image API 3.0 is 24 tests: \(run.stderr)")
        // What info.json declares beyond level 1 (extraFeatures, extraQualities, extraFormats) passes its tests too.
        let extras = ["region_percent", "size_percent", "size_bwh", "quality_grey", "quality_bitonal", "format_png"]
        let extra = try Run.process(python, validate + extras.flatMap { ["--test", $0] })
        #expect(extra.status == 0, "iiif-validate.py, the extras: \(extra.stderr)")
        #expect(extra.stderr.split(separator: "\n").filter { $0.hasSuffix(" PASS") }.count == extras.count, "\(extra.stderr)")
    }

    @Test("every manifest loads in iiif-prezi3; every canvas's image, info.json and annotations resolve",
          .enabled(if: Capabilities.hasFormatValidators))
    func manifests() throws {
        let fixture = try IIIFStoreFixture.get()
        let server = try IIIFTestServer(store: fixture.store)
        let script = fixture.folder.write("check-\(UUID().uuidString).py", text: prezi3Check)
        let manifests = fixture.documents.values.sorted().map { "\(server.base)/\($0)/manifest" }
        let run = try Run.process(python, [script, "served", server.base, "-"] + manifests)
        try #require(run.status == 0, "prezi3 check: \(run.stderr)")
        let report = try JSON.parse(run.text)
        #expect(report["manifests"]?.intValue == 4)
        // The catalogue fields: the title is the label, each field set is a metadata entry, the date a navDate.
        let clean = try server.json("/iiif/\(try #require(fixture.documents["clean.png"]))/manifest")
        #expect(clean["label"]?["none"]?[0]?.stringValue == "Brief an Bessel", "\(clean)")
        let entries = (clean["metadata"]?.arrayValue ?? []).compactMap { entry -> (String, String)? in
            guard let name = entry["label"]?["en"]?[0]?.stringValue, let value = entry["value"]?["none"]?[0]?.stringValue else { return nil }
            return (name, value)
        }
        #expect(entries.prefix(4).map { "\($0.0): \($0.1)" } == ["Title: Brief an Bessel", "Date: 1829-05", "Creator: Carl Friedrich Gauß",
                                                                "Shelfmark: Cod. Ms. Gauß 12"], "\(entries)")
        #expect(clean["navDate"]?.stringValue == "1829-05-01T00:00:00Z")
        let squares = try server.json("/iiif/\(try #require(fixture.documents["squares.png"]))/manifest")
        #expect(squares["navDate"] == nil && squares["label"]?["none"]?[0]?.stringValue?.hasSuffix("squares.png") == true, "\(squares)")
        #expect(report["canvases"]?.intValue == 4)
        #expect(report["images"]?.intValue == 4)
        #expect(report["annotation_pages"]?.intValue == 4)
        let texts = report["texts"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(texts.contains { $0.contains("Specific Written") }, "the clean page's first line: \(texts.prefix(5))")
        #expect(texts.contains { $0.contains("Controlled") }, "the sideways page's text")
        #expect(texts.contains { $0.contains("Rasterized") }, "the PDF page's text")
    }

    @Test("Content Search returns a known word's box: the page JSON's box of it, mapped to the image")
    func search() throws {
        let fixture = try IIIFStoreFixture.get()
        let server = try IIIFTestServer(store: fixture.store)
        for name in ["clean.png", "sideways.jpg"] {
            let document = try #require(fixture.documents[name])
            let page = try #require(fixture.pages[name])
            // The word as the page's JSON has it, with its corners on the original image.
            let store = try Store(path: fixture.store, readOnly: true)
            // The page JSON as export renders it from the stored page model (render on demand).
            let model = try #require(try store.model(of: page))
            let pageJSON = try JSON.parse(try #require(PageArtifacts.render(model, outputs: [.json]).first?.1))
            let words = try #require(pageJSON["words"]?.arrayValue)
            let word = try #require(words.first { ($0["text"]?.stringValue?.count ?? 0) >= 6 && $0["confidence"]?.doubleValue ?? 0 > 80 })
            let text = try #require(word["text"]?.stringValue)
            let corners = try #require(word["original"]?.arrayValue).compactMap { $0.arrayValue?.compactMap(\.doubleValue) }
            let expected = (x: corners.map { $0[0] }.min()!, y: corners.map { $0[1] }.min()!,
                            maxX: corners.map { $0[0] }.max()!, maxY: corners.map { $0[1] }.max()!)

            let query = text.filter { $0.isLetter }
            let answer = try server.json("/iiif/\(document)/search?q=\(query)")
            #expect(answer["type"]?.stringValue == "AnnotationPage")
            let items = try #require(answer["items"]?.arrayValue)
            let canvas = "\(server.base)/\(document)/canvas/\(page)"
            let boxes: [[Int]] = items.compactMap { item in
                guard let target = item["target"]?.stringValue, target.hasPrefix(canvas + "#xywh=") else { return nil }
                return target.dropFirst(canvas.count + 6).split(separator: ",").compactMap { Int($0) }
            }
            #expect(!boxes.isEmpty, "\(name): '\(query)' found: \(answer.rendered)")
            let close = boxes.contains { box in
                abs(Double(box[0]) - expected.x) <= 2 && abs(Double(box[1]) - expected.y) <= 2
                    && abs(Double(box[0] + box[2]) - expected.maxX) <= 2 && abs(Double(box[1] + box[3]) - expected.maxY) <= 2
            }
            #expect(close, "\(name): '\(query)' at \(boxes), the page JSON has \(expected)")
        }
        // A phrase (quoted, + for the space, as a form sends it) is one hit over both words, on their line.
        let document = try #require(fixture.documents["clean.png"])
        let phrase = try server.json("/iiif/\(document)/search?q=%22specific+written%22")
        let hit = try #require(phrase["items"]?.arrayValue?.first)
        #expect(hit["body"]?["value"]?.stringValue == "Specific Written", "\(phrase.rendered)")
        #expect(phrase["id"]?.stringValue == "\(server.base)/\(document)/search?q=%22specific%20written%22")
        // A word on no page finds nothing; an unknown document is 404.
        #expect(try server.json("/iiif/\(document)/search?q=zzyzxqv")["items"]?.arrayValue?.isEmpty == true)
        #expect(try server.get("/iiif/999999/search?q=the").status == 404)
    }

    @Test("Image API answers: a 303 to info.json, tiles in info.json, 400 for bad requests, 404 for unknown pages")
    func imageAnswers() throws {
        let fixture = try IIIFStoreFixture.get()
        let images = PageImages(capacity: 2)
        let server = try IIIFTestServer(store: fixture.store, images: images)
        let page = try #require(fixture.pages["clean.png"])
        let redirect = try server.get("/iiif/image/\(page)")
        #expect(redirect.status == 303 && redirect.head.contains("Location: \(server.base)/image/\(page)/info.json"))
        let info = try server.json("/iiif/image/\(page)/info.json")
        #expect(info["width"]?.intValue == 2480 && info["height"]?.intValue == 3508)
        #expect(info["profile"]?.stringValue == "level1")
        #expect(info["tiles"]?[0]?["scaleFactors"] == [1, 2, 4, 8])
        #expect(try server.get("/iiif/image/\(page)/full/max/0/default.jpg").head.contains("Content-Type: image/jpeg"))
        #expect(try server.get("/iiif/image/\(page)/0,0,1024,1024/256,/0/default.png").head.contains("Content-Type: image/png"))
        #expect(try server.get("/iiif/image/\(page)/full/2481,/0/default.jpg").status == 400, "no upscaling")
        #expect(try server.get("/iiif/image/\(page)/full/max/90/default.jpg").status == 400)
        #expect(try server.get("/iiif/image/\(page)/full/max/0/default.webp").status == 400)
        #expect(try server.get("/iiif/image/999999/info.json").status == 404)
        #expect(try server.get("/iiif/image/..%2F..%2Fetc%2Fpasswd/info.json").status == 404)
        #expect(try server.get("/iiif/image/\(page)/full/max/0").status == 404)
        #expect(try server.get("/iiif/1/manifest").head.contains("Access-Control-Allow-Origin: *"))
        #expect(try HTTP.request(port: server.port, "POST /iiif/1/manifest HTTP/1.0\r\n\r\n").status == 405)
        // Three pages' images through a cache of two.
        for name in ["clean.png", "sideways.jpg", "squares.png"] {
            #expect(try server.get("/iiif/image/\(try #require(fixture.pages[name]))/square/64,/0/default.jpg").status == 200)
        }
        #expect(images.cachedCount == 2)
    }

    @Test("tiles of four pages asked for at once from eight threads, through a cache of two: every answer right")
    func concurrentTiles() throws {
        let fixture = try IIIFStoreFixture.get()
        let images = PageImages(capacity: 2)
        let server = try IIIFTestServer(store: fixture.store, images: images)
        let pages = fixture.pages.values.sorted()
        try #require(pages.count == 4)
        // All inside the smallest image, the PDF page (1250x417 at 300 dpi); a region wholly outside is a 400.
        let tiles = ["0,0,512,512/512,", "512,0,512,512/256,", "0,256,1024,1024/256,", "square/128,", "full/100,"]
        let port = server.port
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<10 {
                let page = pages[(thread + round) % pages.count]
                let tile = tiles[(thread * 3 + round) % tiles.count]
                let path = "/iiif/image/\(page)/\(tile)/0/default.jpg"
                let answer = try? HTTP.request(port: port, "GET \(path) HTTP/1.0\r\n\r\n")
                if answer?.status != 200 || !(answer?.head.contains("Content-Type: image/jpeg") ?? false) {
                    failures.withLock { $0.append("\(path): \(answer?.status ?? 0)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(images.cachedCount <= 2)
    }

    @Test("export --iiif: static manifests and level-0 images that load in iiif-prezi3 from the files alone",
          .enabled(if: Capabilities.hasFormatValidators))
    func staticExport() throws {
        let fixture = try IIIFStoreFixture.get()
        let out = TemporaryDirectory("ocrfarm-iiif-static")
        let base = "https://example.org/archive/iiif"
        let export = try Run.ocrfarm(["export", "--store", fixture.store, "--iiif", out.path, "--iiif-base", base])
        #expect(export.status == 0, "export: \(export.stderr)")
        #expect(export.text.contains("IIIF: 4 manifests, 4 canvases"), "\(export.text)")
        let script = out.write("check.py", text: prezi3Check)
        let manifests = fixture.documents.values.sorted().map { "\(base)/\($0)/manifest.json" }
        let run = try Run.process(python, [script, "static", base, out.path] + manifests)
        try #require(run.status == 0, "prezi3 check of the files: \(run.stderr)")
        let report = try JSON.parse(run.text)
        #expect(report["canvases"]?.intValue == 4 && report["annotation_pages"]?.intValue == 4)
        let page = try #require(fixture.pages["clean.png"])
        let info = try JSON.parse(try FileSystem.read(out.path + "/image/\(page)/info.json"))
        #expect(info["profile"]?.stringValue == "level0")
        // Every size info.json lists is a file.
        for size in info["sizes"]?.arrayValue ?? [] {
            let w = size["width"]?.intValue ?? 0, h = size["height"]?.intValue ?? 0
            #expect(FileSystem.exists(out.path + "/image/\(page)/full/\(w),\(h)/0/default.jpg"))
        }
        #expect(try Run.ocrfarm(["export", "--store", fixture.store, "--iiif", out.path]).status == 64, "--iiif-base is required")
    }

    @Test("export --iiif published by a plain web server (Python's http.server) passes iiif-validator at level 0",
          .enabled(if: Capabilities.hasFormatValidators))
    func staticLevel0() throws {
        let fixture = try IIIFStoreFixture.get()
        let out = TemporaryDirectory("ocrfarm-iiif-web")
        // A free port: the system picks one for a socket closed at once (loopback; nothing else is starting here).
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(probe, $0, &length) }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        close(probe)
        let base = "http://127.0.0.1:\(port)/iiif"
        let export = try Run.ocrfarm(["export", "--store", fixture.store, "--iiif", out.path + "/iiif", "--iiif-base", base])
        try #require(export.status == 0, "export: \(export.stderr)")
        let web = try ChildProcess(executable: python, arguments: ["-m", "http.server", String(port), "--bind", "127.0.0.1",
                                                                   "--directory", out.path],
                                   outputPath: out.file("http.log"))
        defer {
            kill(web.pid, SIGTERM)
            _ = web.wait()
        }
        var ready = false
        for _ in 0..<100 where !ready {
            if let fd = try? HTTP.connect(port: port) { close(fd); ready = true } else { usleep(100_000) }
        }
        try #require(ready, "http.server did not start on port \(port)")
        let page = try #require(fixture.pages["squares.png"])
        let run = try Run.process(python, [bin + "/iiif-validate.py", "-s", "127.0.0.1:\(port)", "-p", "iiif/image",
                                           "-i", "\(page)", "--version=3.0", "--level", "0", "-v"])
        #expect(run.status == 0, "iiif-validate.py --level 0 on the static files: \(run.stderr)")
        #expect(run.stderr.split(separator: "\n").filter { $0.hasSuffix(" PASS") }.count >= 5, "\(run.stderr)")
    }
}
