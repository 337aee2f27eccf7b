import Testing
import Crypto
import FarmCore
import FarmRuntime
import FarmStore
import FarmWeb
import MicroHTTPD
import TestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A store made by a real `ocrfarm run` on two sample pages, plus a file that fails at submit (for requeue), made
/// once for the suite.
final class ServedStore: @unchecked Sendable {
    static let shared = Result { try ServedStore() }

    let folder = TemporaryDirectory("serve-e2e")
    let path: String
    let samples = Fixtures.packageRoot + "/Samples/pages/"
    var clean0: String { samples + "clean-000.png" }

    init() throws {
        path = folder.file("farm.db")
        let run = try Run.ocrfarm(["run", "--store", path, "--workers", "1", samples + "clean-000.png", samples + "clean-001.png"],
                                  environment: ["OMP_THREAD_LIMIT": "1"])
        guard run.status == 0 else { throw StoreError("ocrfarm run failed: \(run.stderr)") }
        let bad = folder.write("broken.png", Array("not an image at all".utf8))
        let submit = try Run.ocrfarm(["submit", "--store", path, bad])
        guard submit.status == 0 || submit.status == 65 else { throw StoreError("ocrfarm submit failed: \(submit.stderr)") }
    }
}

/// A running `ocrfarm serve` on a port the system chose.
final class Served: @unchecked Sendable {
    let process: BackgroundProcess
    let port: Int

    init(store: String, _ extra: [String] = [], log: String) throws {
        process = try BackgroundProcess(Fixtures.binary, ["serve", "--store", store, "--listen", "127.0.0.1:0"] + extra, logPath: log)
        var found: Int?
        let deadline = Date().addingTimeInterval(20)
        while found == nil && Date() < deadline && process.isRunning {
            if let range = process.log.range(of: #"listening on http://127\.0\.0\.1:(\d+)/"#, options: .regularExpression) {
                found = Int(process.log[range].split(separator: ":").last!.dropLast())
            }
            usleep(20_000)
        }
        guard let found else { throw TestFailure(message: "serve did not start: \(process.log)") }
        port = found
    }

    deinit { process.terminate(waiting: 5) }

    struct Answer {
        let status: Int
        let head: String
        let body: String
        /// The body's bytes (an image).
        var data: [UInt8] = []
        var json: JSON? { try? JSON.parse(Array(body.utf8)) }
        func header(_ name: String) -> String? {
            for line in head.split(separator: "\r\n") {
                let parts = line.split(separator: ":", maxSplits: 1)
                if parts.count == 2 && parts[0].lowercased() == name.lowercased() { return parts[1].trimmingCharacters(in: .whitespaces) }
            }
            return nil
        }
    }

    func call(_ path: String, method: String = "GET", token: String? = nil, contentType: String? = nil, body: [UInt8] = [],
              wait: Int = 10) throws -> Answer {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        if let contentType { head += "Content-Type: \(contentType)\r\n" }
        if method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        let fd = try HTTP.connect(port: port, wait: wait)
        defer { close(fd) }
        let request = Array((head + "\r\n").utf8) + body
        var sent = 0
        while sent < request.count {
            let count = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count <= 0 { break }
            sent += count
        }
        let data = HTTP.receiveAll(fd)
        guard let split = (0..<max(0, data.count - 3)).first(where: { data[$0] == 13 && data[$0 + 1] == 10 && data[$0 + 2] == 13 && data[$0 + 3] == 10 }) else {
            throw TestFailure(message: "no answer to \(method) \(path)")
        }
        let headText = String(decoding: data[..<split], as: UTF8.self)
        let status = Int(headText.split(separator: " ").dropFirst().first ?? "") ?? 0
        return Answer(status: status, head: headText, body: String(decoding: data[(split + 4)...], as: UTF8.self),
                      data: Array(data[(split + 4)...]))
    }

    func json(_ path: String, token: String?, _ body: String) throws -> Answer {
        try call(path, method: "POST", token: token, contentType: "application/json", body: Array(body.utf8))
    }
}

func makeToken(_ store: String, _ role: String) throws -> String {
    let output = try Run.ocrfarm(["token", "create", "--store", store, "--role", role, "--name", "\(role)-\(UInt32.random(in: 0...UInt32.max))"])
    guard output.status == 0 else { throw TestFailure(message: "token create: \(output.stderr)") }
    return output.text.trimmingCharacters(in: .whitespacesAndNewlines)
}

func multipart(_ files: [(name: String, bytes: [UInt8])], fields: [(String, String)] = [], boundary: String = "ocrfarmtestboundary") -> [UInt8] {
    var body: [UInt8] = []
    for (name, value) in fields {
        body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8)
    }
    for file in files {
        body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(file.name)\"\r\nContent-Type: image/png\r\n\r\n".utf8)
        body += file.bytes + Array("\r\n".utf8)
    }
    return body + Array("--\(boundary)--\r\n".utf8)
}

@Suite("ocrfarm serve: the HTTP API over a real farm's store", .serialized)
struct ServeTests {
    func store() throws -> ServedStore { try ServedStore.shared.get() }

    @Test("every read endpoint answers JSON (or the rendering) with the security headers")
    func reads() throws {
        let store = try store()
        let served = try Served(store: store.path, log: store.folder.file("reads.log"))

        let status = try served.call("/api/status")
        #expect(status.status == 200 && status.header("Content-Type") == "application/json; charset=utf-8")
        for (name, value) in [("Content-Security-Policy", "default-src 'self'"), ("X-Content-Type-Options", "nosniff")] {
            #expect(status.header(name)?.hasPrefix(value) == true, "\(status.head)")
        }
        let cli = try Run.ocrfarm(["status", "--store", store.path, "--json"])
        let cliJSON = try JSON.parse(Array(cli.stdout))
        #expect(status.json?.objectValue?.map(\.0) == cliJSON.objectValue?.map(\.0), "the same keys as status --json")
        #expect(status.json?["pages"] == cliJSON["pages"])
        #expect(status.json?["pages"]?["done"]?.intValue == 2 && status.json?["pages"]?["failed"]?.intValue == 1)

        // The dashboard's chart: pages finished per minute over the last hour, per hour over the day.
        let throughput = try served.call("/api/throughput")
        let perMinute = try #require(throughput.json?["per_minute"]?.arrayValue?.compactMap { $0.intValue })
        #expect(perMinute.count == 60 && perMinute.reduce(0, +) == 2, "\(throughput.body)")
        #expect(throughput.json?["per_hour"]?.arrayValue?.compactMap { $0.intValue }.reduce(0, +) == 2)

        // Paged by cursor: one at a time, then the rest.
        let first = try served.call("/api/documents?limit=1")
        let firstDocs = try #require(first.json?["documents"]?.arrayValue)
        #expect(firstDocs.count == 1 && firstDocs[0]["name"]?.stringValue == "clean-000.png")
        #expect(firstDocs[0]["progress"]?.doubleValue == 1 && firstDocs[0]["quality"]?["mean"]?.doubleValue != nil)
        let cursor = try #require(first.json?["next"]?.intValue)
        let rest = try served.call("/api/documents?after=\(cursor)")
        #expect(rest.json?["documents"]?.arrayValue?.map { $0["name"]?.stringValue ?? "" } == ["clean-001.png", "broken.png"])
        #expect(rest.json?["next"]?.isNull == true)
        #expect(try served.call("/api/documents?limit=zero").status == 400)

        let document = try #require(firstDocs[0]["id"]?.intValue)
        let pages = try served.call("/api/documents/\(document)/pages")
        let page = try #require(pages.json?["pages"]?[0])
        #expect(page["state"]?.stringValue == "done" && page["number"]?.intValue == 1)
        let pageID = try #require(page["id"]?.intValue)

        let detail = try served.call("/api/pages/\(pageID)")
        #expect(detail.status == 200)
        let text = try #require(detail.json?["result"]?["text"]?.stringValue)
        #expect(text.count > 20)
        let words = detail.json?["result"]?["structure"]?["blocks"]?[0]?["paragraphs"]?[0]?["lines"]?[0]?["words"]?.arrayValue ?? []
        #expect(!words.isEmpty && words[0]["box"]?.arrayValue?.count == 4 && words[0]["confidence"]?.doubleValue != nil)
        #expect(detail.json?["page"]?.isNull == false, "the page JSON rendering is included")
        #expect(detail.json?["source"]?["kind"]?.stringValue == "image")

        for (name, type) in [("hocr", "application/xhtml+xml"), ("alto", "application/xml"), ("page", "application/xml"),
                             ("json", "application/json"), ("pdf", "application/pdf"), ("text", "text/plain")] {
            let answer = try served.call("/api/pages/\(pageID)/\(name)")
            #expect(answer.status == 200 && answer.header("Content-Type")?.hasPrefix(type) == true, "\(name): \(answer.head)")
            #expect(answer.header("X-Content-Type-Options") == "nosniff")
        }
        #expect(try served.call("/api/pages/\(pageID)/text").body == text)

        let image = try served.call("/api/pages/\(pageID)/image")
        let original = try FileSystem.read(store.clean0)
        #expect(image.status == 200 && image.header("Content-Type") == "image/png")
        #expect(image.header("Content-Length") == String(original.count))

        // Search: the query language of `ocrfarm search`, matches marked in the snippet.
        let word = try #require(text.split(whereSeparator: { !$0.isLetter }).map(String.init).first { $0.count >= 5 })
        let search = try served.call("/api/search?q=\(word.lowercased())")
        let hits = try #require(search.json?["hits"]?.arrayValue)
        #expect(hits.contains { $0["page_id"]?.intValue == pageID }, "\(search.body)")
        let snippet = hits.first { $0["page_id"]?.intValue == pageID }?["snippet"]?.arrayValue ?? []
        #expect(snippet.contains { $0["match"]?.boolValue == true && $0["text"]?.stringValue?.lowercased() == word.lowercased() })
        #expect(try served.call("/api/search?q=%22unclosed").status == 400)
        #expect(try served.call("/api/search").status == 400)

        #expect(try served.call("/api/pages/999999").status == 404)
        #expect(try served.call("/api/documents/999999/pages").status == 404)
        #expect(try served.call("/nothing").status == 404)
        #expect(try served.call("/nothing").header("Content-Security-Policy") != nil)
    }

    @Test("writes: 401 without a token, 403 with a read token; a requeue by an admin token reaches the store")
    func tokens() throws {
        let store = try store()
        let read = try makeToken(store.path, "read")
        let admin = try makeToken(store.path, "admin")
        let served = try Served(store: store.path, log: store.folder.file("tokens.log"))
        let body = #"{"failed": true, "dry_run": true}"#

        let none = try served.json("/api/requeue", token: nil, body)
        #expect(none.status == 401 && none.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
        #expect(try served.json("/api/requeue", token: read, body).status == 403)
        #expect(try served.json("/api/requeue", token: "ocrfarm_" + String(repeating: "0", count: 64), body).status == 401)
        #expect(try served.call("/api/status", token: "wrong").status == 401, "a bad token is refused even where none is needed")
        #expect(try served.call("/api/status", token: read).status == 200)

        let dry = try served.json("/api/requeue", token: admin, body)
        #expect(dry.status == 200 && dry.json?["would_requeue"]?.intValue == 1, "\(dry.body)")
        #expect(try Store(path: store.path, readOnly: true).status().count(.failed) == 1, "a dry run changes nothing")
        #expect(try served.json("/api/requeue", token: admin, "{}").status == 400, "a requeue says what to requeue")

        let done = try served.json("/api/requeue", token: admin, #"{"failed": true}"#)
        #expect(done.status == 200 && done.json?["requeued"]?.intValue == 1, "\(done.body)")
        let after = try Store(path: store.path, readOnly: true).status()
        #expect(after.count(.failed) == 0 && after.count(.queued) == 1)

        // Revoked: refused from then on.
        let list = try Run.ocrfarm(["token", "list", "--store", store.path])
        #expect(list.status == 0 && list.text.contains("admin") && !list.text.contains(admin), "a token is never shown again")
        let name = try #require(list.text.split(separator: "\n").first { $0.contains(" read-") }?.split(separator: " ").dropFirst().first)
        #expect(try Run.ocrfarm(["token", "revoke", "--store", store.path, String(name)]).status == 0)
        #expect(try served.call("/api/status", token: read).status == 401)
    }

    @Test("no URL reaches the file system: ../, %2e%2e, %00, absolute paths and encoded slashes are refused")
    func traversal() throws {
        let store = try store()
        let served = try Served(store: store.path, log: store.folder.file("traversal.log"))
        for path in ["/api/pages/1/../../../../etc/passwd", "/api/pages/%2e%2e/%2e%2e/etc/passwd", "/%2e%2e/%2e%2e/etc/passwd",
                     "//etc/passwd", "/etc/passwd", "/api/pages/1/%2Fetc%2Fpasswd", "/api/pages/..%2f..%2fetc%2fpasswd",
                     "/api/pages/1/image/../../../farm.db", "/api/pages/%2fetc%2fpasswd/image", "/iiif/..%2f..%2fetc%2fpasswd"] {
            let answer = try served.call(path)
            #expect([400, 404].contains(answer.status), "\(path): \(answer.status)")
            #expect(!answer.body.contains("root:"), "\(path)")
        }
        // %00 used to end the path before the check (issue 37): "/api/status%00/../x" was answered as /api/status.
        for path in ["/api/status%00", "/api/status%00/x", "/iiif/image/1%00/info.json"] {
            let answer = try served.call(path)
            #expect(answer.status == 400 && answer.body.contains("NUL (%00)"), "\(path): \(answer.status) \(answer.body)")
        }
    }

    @Test("uploads: stored under the store's folder with a safe name and submitted; bounded in size and count; delete")
    func uploads() throws {
        let store = try store()
        let admin = try makeToken(store.path, "admin")
        let served = try Served(store: store.path, ["--max-upload-bytes", "200000", "--max-upload-files", "2"],
                                log: store.folder.file("uploads.log"))
        let png = TestImages.png(marker: "upload")
        let type = "multipart/form-data; boundary=ocrfarmtestboundary"

        #expect(try served.call("/api/submit", method: "POST", contentType: type, body: multipart([("a.png", png)])).status == 401)
        let answer = try served.call("/api/submit", method: "POST", token: admin, contentType: type,
                                     body: multipart([("../../evil name<x>.png", png)], fields: [("document", "uploaded page")]))
        #expect(answer.status == 201, "\(answer.body)")
        let added = try #require(answer.json?["documents"]?[0])
        #expect(added["name"]?.stringValue == "uploaded page" && added["pages"]?.intValue == 1)
        // Read by the default engine, as `submit` without --engine would.
        let uploadedID = try #require(added["id"]?.intValue)
        #expect(try Store(path: store.path, readOnly: true).options(of: DocumentID(Int64(uploadedID)))?.engine == .defaultChoice)
        let uploads = store.folder.file("uploads")
        let batches = try FileManager.default.contentsOfDirectory(atPath: uploads)
        #expect(batches.count >= 1)
        let stored = try batches.flatMap { try FileManager.default.contentsOfDirectory(atPath: uploads + "/" + $0) }
        #expect(stored.contains("evil_name_x_.png"), "\(stored)")
        #expect(!FileManager.default.fileExists(atPath: store.folder.path + "/../evil name<x>.png"))

        let tooBig = try served.call("/api/submit", method: "POST", token: admin, contentType: type,
                                     body: multipart([("big.png", [UInt8](repeating: 7, count: 250_000))]))
        #expect(tooBig.status == 413)
        let tooMany = try served.call("/api/submit", method: "POST", token: admin, contentType: type,
                                      body: multipart([("1.png", png), ("2.png", png), ("3.png", png)]))
        #expect(tooMany.status == 413)
        #expect(try served.call("/api/submit", method: "POST", token: admin, contentType: "text/plain", body: Array("x".utf8)).status == 400)

        // Markup in a name comes back as the same string, with no markup in the answer's bytes.
        let xss = #"<img src=x onerror="alert(1)">&<script>"#
        let marked = try served.call("/api/submit", method: "POST", token: admin, contentType: type,
                                     body: multipart([("<script>.png", TestImages.png(marker: "xss"))], fields: [("document", xss)]))
        #expect(marked.status == 201 && !marked.body.contains("<"), "\(marked.body)")
        let markedID = try #require(marked.json?["documents"]?[0]?["id"]?.intValue)
        let listed = try served.call("/api/documents?after=\(markedID - 1)&limit=1")
        #expect(listed.json?["documents"]?[0]?["name"]?.stringValue == xss)
        #expect(!listed.body.contains("<") && !listed.body.contains(">") && !listed.body.contains("&"), "\(listed.body)")

        let id = try #require(added["id"]?.intValue)
        let dry = try served.json("/api/delete", token: admin, #"{"document": \#(id), "dry_run": true}"#)
        #expect(dry.status == 200 && dry.json?["documents"]?.intValue == 1)
        let deleted = try served.json("/api/delete", token: admin, #"{"document": \#(id)}"#)
        #expect(deleted.status == 200 && deleted.json?["pages"]?.intValue == 1, "\(deleted.body)")
        #expect(try served.json("/api/delete", token: admin, #"{"document": \#(id)}"#).status == 404)
    }

    @Test("/metrics passes promtool; stage durations are histograms whose counts never drop")
    func metrics() throws {
        let store = try store()
        let served = try Served(store: store.path, log: store.folder.file("metrics.log"))
        let first = try served.call("/metrics")
        #expect(first.status == 200 && first.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        let promtool = try #require(Run.which("promtool"), "promtool (Debian's prometheus package, Scripts/test installs it) is needed")
        let folder = TemporaryDirectory("promtool")
        let file = folder.write("metrics.txt", text: first.body)
        let check = try Run.process("/bin/sh", ["-c", "\(promtool) check metrics < \(file)"])
        #expect(check.status == 0, "\(check.text)\(check.stderr)")
        #expect(first.body.contains("# TYPE ocrfarm_stage_duration_seconds histogram"))
        func count(_ text: String, _ stage: String) -> Int? {
            text.split(separator: "\n").first { $0.hasPrefix("ocrfarm_stage_duration_seconds_count{stage=\"\(stage)\"}") }
                .flatMap { Int($0.split(separator: " ").last ?? "") }
        }
        func infBucket(_ text: String, _ stage: String) -> Int? {
            text.split(separator: "\n").first { $0.hasPrefix("ocrfarm_stage_duration_seconds_bucket{le=\"+Inf\",stage=\"\(stage)\"}") }
                .flatMap { Int($0.split(separator: " ").last ?? "") }
        }
        let recognized = try #require(count(first.body, "recognize"))
        #expect(recognized >= 2 && infBucket(first.body, "recognize") == recognized)
        let second = try served.call("/metrics")
        #expect((count(second.body, "recognize") ?? 0) >= recognized, "a counter never drops between scrapes")
    }

    @Test("a listen beyond loopback needs a token or --insecure-open")
    func exposedListen() throws {
        let folder = TemporaryDirectory("serve-open")
        let path = folder.file("s.db")
        #expect(try Run.ocrfarm(["submit", "--store", path, try TestImages.tinyPages(1, in: folder)]).status == 0)
        let refused = try Run.ocrfarm(["serve", "--store", path, "--listen", "0.0.0.0:0"])
        #expect(refused.status == 69 && refused.stderr.contains("token"), "\(refused.stderr)")
        let open = try Served(store: path, ["--insecure-open"], log: folder.file("open.log"))
        #expect(try open.call("/api/status").status == 200)
    }
}

@Suite("the document-done webhook")
struct WebhookTests {
    @Test("HMAC-SHA256 matches RFC 4231")
    func hmac() {
        let mac = HMAC.sha256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        #expect(mac.map { String(format: "%02x", $0) }.joined() == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        let long = HMAC.sha256(key: [UInt8](repeating: 0xaa, count: 131),
                               message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8))
        #expect(long.map { String(format: "%02x", $0) }.joined() == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    /// A receiver on loopback that answers 500 to the first delivery and 200 after, keeping what it got.
    final class Receiver: @unchecked Sendable {
        let lock = NSLock()
        var deliveries: [(body: [UInt8], signature: String?, status: Int)] = []
        var server: HTTPServer?
        var port = 0

        init() throws {
            let (fd, port) = try Self.listening()
            self.port = port
            server = try HTTPServer(listeningSocket: fd) { [unowned self] request in
                self.lock.lock()
                defer { self.lock.unlock() }
                let status = self.deliveries.isEmpty ? 500 : 200
                self.deliveries.append((request.body, request.header("x-ocrfarm-signature"), status))
                return .text(status, "ok\n")
            }
        }

        static func listening() throws -> (Int32, Int) {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            try #require(bound == 0 && listen(fd, 16) == 0)
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            return (fd, Int(UInt16(bigEndian: address.sin_port)))
        }

        var received: [(body: [UInt8], signature: String?, status: Int)] {
            lock.lock()
            defer { lock.unlock() }
            return deliveries
        }
    }

    @Test("coordinator --http --webhook: a finished document is posted, retried after a failed delivery, signed")
    func delivered() throws {
        let receiver = try Receiver()
        defer { receiver.server?.stop() }
        let farm = FarmHarness()
        defer { farm.stopAll() }
        let secret = "s3cret-for-the-test"
        let secretFile = farm.folder.write("hook.secret", text: secret + "\n")
        try farm.submit(["--document", "hooked", try TestImages.tinyPages(3, in: farm.folder)])
        let port = FarmHarness.freePort()
        let http = FarmHarness.freePort()
        _ = try farm.startCoordinator(port: port, ["--http", "127.0.0.1:\(http)", "--webhook", "http://127.0.0.1:\(receiver.port)/hook",
                                                   "--webhook-secret-file", secretFile])
        // The HTTP API answers from the coordinator process before the pages are read.
        #expect(FarmHarness.wait(seconds: 20) { (try? HTTP.request(port: http, "GET /api/status HTTP/1.0\r\n\r\n").status) == 200 },
                "\(farm.logs)")
        _ = try farm.startWorker(port: port, ["--engine", "none", "--slots", "1"], name: "worker")
        #expect(FarmHarness.wait(seconds: 40) { receiver.received.count >= 2 }, "\(farm.logs)")
        let got = receiver.received
        #expect(got.first?.status == 500 && got.dropFirst().first?.status == 200, "the first delivery failed, the retry took")
        for delivery in got.prefix(2) {
            let expected = "sha256=" + HMAC.sha256(key: Array(secret.utf8), message: delivery.body).map { String(format: "%02x", $0) }.joined()
            #expect(delivery.signature == expected)
            let json = try JSON.parse(delivery.body)
            #expect(json["name"]?.stringValue == "hooked" && json["pages"]?.intValue == 3 && json["done"]?.intValue == 3
                    && json["failed"]?.intValue == 0, "\(String(decoding: delivery.body, as: UTF8.self))")
        }
        #expect(got.count == 2, "one document, delivered once after its retry")
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
