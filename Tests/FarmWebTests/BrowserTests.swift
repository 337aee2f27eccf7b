import Testing
import FarmCore
import FarmRuntime
import TestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import FarmWeb
import FarmStore

/// What the browser test needs: Debian's chromium, chromium-driver, python3-selenium and python3-pil (Scripts/test
/// installs them). Under OCRFARM_REQUIRE_ALL_TESTS=1 the test always runs, so a missing one fails it.
enum Browser {
    static let chromium = "/usr/bin/chromium"
    static let driver = "/usr/bin/chromedriver"
    static var available: Bool {
        Capabilities.allRequired || (FileManager.default.isExecutableFile(atPath: chromium)
            && FileManager.default.isExecutableFile(atPath: driver) && pythonHasModules)
    }
    static var pythonHasModules: Bool {
        (try? Run.process("/usr/bin/python3", ["-c", "import selenium, PIL"]))?.status == 0
    }
    static var script: String { Fixtures.packageRoot + "/Scripts/browser-check" }
}

@Suite("the dashboard and viewer in a real browser", .serialized)
struct BrowserTests {
    @Test("dashboard counts, requeue, search, word boxes and XSS pages in headless chromium against a real farm's store",
          .enabled(if: Browser.available), .timeLimit(.minutes(10)))
    func browser() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Browser.chromium), "chromium (Debian) is needed")
        try #require(FileManager.default.isExecutableFile(atPath: Browser.driver), "chromium-driver (Debian) is needed")
        try #require(Browser.pythonHasModules, "python3-selenium and python3-pil (Debian) are needed")

        // A real farm's store: a Chinese page, two English pages, a photo, a file that fails at submit, and one page whose
        // result text is markup.
        let folder = TemporaryDirectory("browser")
        let store = folder.file("farm.db")
        let samples = Fixtures.packageRoot + "/Samples/pages/"
        // Sources no browser shows as they are (issue 36): a PDF page and the second of a TIFF's three frames.
        let sources = folder.file("sources")
        try FileManager.default.createDirectory(atPath: sources, withIntermediateDirectories: true)
        let made = try Run.process("/usr/bin/python3", [Browser.script, "sources", Fixtures.packageRoot + "/Tests/Fixtures", sources])
        try #require(made.status == 0, "browser-check sources: \(made.stderr)")
        for arguments in [["--lang", "chi_sim+eng", samples + "cjk-000.png"],
                          [samples + "clean-000.png", samples + "clean-001.png", samples + "photo-000.jpg",
                           sources + "/scan.pdf", sources + "/frames.tif"]] {
            let run = try Run.ocrfarm(["run", "--store", store, "--workers", "1"] + arguments, environment: ["OMP_THREAD_LIMIT": "1"])
            try #require(run.status == 0, "ocrfarm run: \(run.stderr)")
        }
        // A watched page whose file `watch --done-to` moved: the store follows it (issue 36).
        let inbox = folder.file("inbox"), done = folder.file("done")
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        _ = folder.write("inbox/watched.tif", try Fixtures.read("tesseract-testdata/eurotext.tif"))
        let watcher = try BackgroundProcess(Fixtures.binary, ["watch", inbox, "--store", store, "--workers", "1", "--quiet", "0.5",
                                                              "--done-to", done],
                                            logPath: folder.file("watch.out"), environment: ["OMP_THREAD_LIMIT": "1"])
        let moved = FarmHarness.wait(seconds: 120) { FileManager.default.fileExists(atPath: done + "/watched.tif") }
        #expect(watcher.terminate(waiting: 30) == 0, "\(watcher.log)")
        try #require(moved, "watch moved the file: \(watcher.log)")
        let bad = folder.write("broken.png", Array("not an image at all".utf8))
        let submit = try Run.ocrfarm(["submit", "--store", store, bad])
        try #require(submit.status == 0 || submit.status == 65, "ocrfarm submit: \(submit.stderr)")
        let xss = try Run.process("/usr/bin/python3", [Browser.script, "xss", store])
        try #require(xss.status == 0, "xss page: \(xss.stderr)")
        let xssPage = try #require(Int(xss.text.trimmingCharacters(in: .whitespacesAndNewlines)))

        // The first two runs' workers were last heard an hour ago: the dashboard folds them into one line (issue 36).
        let aged = try Run.process("/usr/bin/python3", ["-c", """
            import sqlite3, sys
            with sqlite3.connect(sys.argv[1]) as store:
                store.execute("UPDATE workers SET last_seen = last_seen - 3600 WHERE id IN (SELECT id FROM workers ORDER BY first_seen LIMIT 2)")
            """, store])
        try #require(aged.status == 0, "\(aged.stderr)")
        let before = try JSON.parse(Array(try Run.ocrfarm(["status", "--store", store, "--json"]).stdout))
        let code = try #require(before["failures"]?[0]?["code"]?.stringValue, "a failed page to requeue")
        let admin = try makeToken(store, "admin")
        let served = try Served(store: store, log: folder.file("serve.log"))
        let documents = try #require(served.call("/api/documents").json?["documents"]?.arrayValue)
        func firstPage(_ name: String, _ index: Int = 0) throws -> Int {
            let document = try #require(documents.first { $0["name"]?.stringValue == name }?["id"]?.intValue)
            return try #require(served.call("/api/documents/\(document)/pages").json?["pages"]?[index]?["id"]?.intValue)
        }
        let out = Fixtures.packageRoot + "/.build/test-output/browser"
        try? FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let config: JSON = .object([
            ("base", JSON("http://127.0.0.1:\(served.port)")), ("token", JSON(admin)), ("out", JSON(out)),
            ("status", before), ("requeue_code", JSON(code)),
            ("english_page", JSON(try firstPage("clean-000.png"))), ("chinese_page", JSON(try firstPage("cjk-000.png"))),
            ("xss_pages", .array([JSON(xssPage)])), ("photo_page", JSON(try firstPage("photo-000.jpg"))),
            ("source_pages", .array([
                .object([("id", JSON(try firstPage("scan.pdf"))), ("label", "PDF page 1"), ("screenshot", "page-pdf.png")]),
                .object([("id", JSON(try firstPage("frames.tif", 1))), ("label", "TIFF frame 2 of 3"), ("screenshot", "page-tiff.png")]),
                .object([("id", JSON(try firstPage("watched.tif"))), ("label", "a watched page moved by --done-to"),
                         ("screenshot", "page-moved.png")]),
            ])),
        ])
        let configFile = folder.write("config.json", text: config.rendered)
        let check = try Run.process("/usr/bin/python3", [Browser.script, "check", configFile])
        print(check.text)
        #expect(check.status == 0, "browser check:\n\(check.text)\n\(check.stderr)")

        // The requeue the UI made reached the store: the failed page is queued again.
        let after = try JSON.parse(Array(try Run.ocrfarm(["status", "--store", store, "--json"]).stdout))
        let failed = before["pages"]?["failed"]?.intValue ?? 0
        #expect(failed > 0 && after["pages"]?["failed"]?.intValue == 0, "\(after["pages"] ?? .null)")
        #expect(after["pages"]?["queued"]?.intValue == (before["pages"]?["queued"]?.intValue ?? 0) + failed)
        // A coordinator takes the requeued page up: `run` with no files goes on with the queue, and the page is
        // tried again (it fails again: it is still not an image).
        let resumed = try Run.ocrfarm(["run", "--store", store, "--workers", "1"], environment: ["OMP_THREAD_LIMIT": "1"])
        #expect(resumed.status == 0 || resumed.status == 65, "\(resumed.stderr)")
        let brokenPage = try #require(documents.first { $0["name"]?.stringValue == "broken.png" }?["id"]?.intValue)
        let retried = try served.call("/api/documents/\(brokenPage)/pages").json?["pages"]?[0]
        #expect(retried?["attempts"]?.intValue ?? 0 >= 2 && retried?["state"]?.stringValue == "failed", "\(retried ?? .null)")
        for name in ["dashboard.png", "page.png", "photo.png", "page-pdf.png", "page-tiff.png", "page-moved.png", "documents.png",
                     "search-english.png", "reader.png"] {
            #expect(FileManager.default.fileExists(atPath: out + "/" + name), "screenshot \(name)")
        }
    }

    @Test("leased 3 of two one-slot workers is shown as 2 read, 1 fetched ahead; the viewer waits out a full image queue: 'busy' shown, asked again after Retry-After, the image then shown",
          .enabled(if: Browser.available), .timeLimit(.minutes(5)))
    func busyImageServer() throws {
        try #require(Browser.pythonHasModules, "python3-selenium and python3-pil (Debian) are needed")
        // Submitted, not read: six 4000 × 4000 pt PDF pages (each made a 5000 × 5000 image by pdftoppm, a few
        // seconds) fill the server's two image threads and its queue of four; the viewed page is a small PNG.
        let folder = TemporaryDirectory("browser-busy")
        let store = folder.file("farm.db")
        let pdf = folder.write("big.pdf", TestPDF.pages(Array(repeating: (4000, 4000, 0), count: 6)))
        let submit = try Run.ocrfarm(["submit", "--store", store, pdf, Fixtures.packageRoot + "/Samples/pages/clean-000.png"])
        try #require(submit.status == 0, "ocrfarm submit: \(submit.stderr)")
        // Two one-slot workers holding three pages (the issue's "leased 3"): host-a reads one and has fetched the
        // next ahead, host-b reads one. The dashboard must say so.
        do {
            let farm = try Store(path: store)
            let now = Clock.now
            let (a, b) = (WorkerID("host-a/101/x"), WorkerID("host-b/102/y"))
            let big = try farm.pages(of: try farm.documents(named: "big.pdf").map(\.id)).map(\.id)
            try farm.write {
                for (id, host, pid) in [(a, "host-a", 101), (b, "host-b", 102)] {
                    try farm.workerJoined(id, host: host, pid: pid, slots: 1, engine: "tesseract", languages: ["eng"], version: "v", now: now)
                }
                try farm.workersHeard([(a, now), (b, now)])
                for (page, worker) in zip(big.prefix(3), [a, a, b]) {
                    try #require(try farm.lease(page, to: worker, now: now, expires: now + 3600) != nil)
                }
            }
        }
        let served = try Served(store: store, log: folder.file("serve.log"))
        let documents = try #require(served.call("/api/documents").json?["documents"]?.arrayValue)
        func pages(_ name: String) throws -> [JSON] {
            let document = try #require(documents.first { $0["name"]?.stringValue == name }?["id"]?.intValue)
            return try #require(served.call("/api/documents/\(document)/pages").json?["pages"]?.arrayValue)
        }
        let flood = try pages("big.pdf").compactMap { $0["id"] }
        try #require(flood.count == 6)
        let out = Fixtures.packageRoot + "/.build/test-output/browser"
        try? FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let config: JSON = .object([("base", JSON("http://127.0.0.1:\(served.port)")), ("out", JSON(out)),
                                    ("flood", .array(flood)), ("page", try #require(try pages("clean-000.png").first?["id"]))])
        let check = try Run.process("/usr/bin/python3", [Browser.script, "busy", folder.write("config.json", text: config.rendered)])
        print(check.text)
        #expect(check.status == 0, "browser check:\n\(check.text)\n\(check.stderr)")
        #expect(FileManager.default.fileExists(atPath: out + "/page-busy.png"))
    }

    @Test("an admin edits a document's metadata in the viewer: a bad date refused, the fields saved to the store and shown after a reload, found by search; then drops two files on the document list: one added, the duplicate skipped and not kept",
          .enabled(if: Browser.available), .timeLimit(.minutes(5)))
    func metadata() throws {
        try #require(Browser.pythonHasModules, "python3-selenium and python3-pil (Debian) are needed")
        let folder = TemporaryDirectory("browser-metadata")
        let store = folder.file("farm.db")
        let submit = try Run.ocrfarm(["submit", "--store", store, Fixtures.packageRoot + "/Samples/pages/clean-000.png"])
        try #require(submit.status == 0, "ocrfarm submit: \(submit.stderr)")
        let admin = try makeToken(store, "admin")
        let document = try #require(try Store(path: store, readOnly: true).documentSummaries(after: nil, limit: 1).first?.document.id)
        let served = try Served(store: store, log: folder.file("serve.log"))
        let out = Fixtures.packageRoot + "/.build/test-output/browser"
        try? FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let config: JSON = .object([("base", JSON("http://127.0.0.1:\(served.port)")), ("out", JSON(out)), ("token", JSON(admin)),
                                    ("document", JSON(Int(document.rawValue))),
                                    ("drop", .array(try ["clean-001.png", "clean-000.png"].map { name in
                                        .array([JSON("dropped-" + name), JSON(Data(try FileSystem.read(Fixtures.packageRoot + "/Samples/pages/" + name)).base64EncodedString())])
                                    }))])
        let check = try Run.process("/usr/bin/python3", [Browser.script, "metadata", folder.write("config.json", text: config.rendered)])
        print(check.text)
        #expect(check.status == 0, "browser check:\n\(check.text)\n\(check.stderr)")
        #expect(try Store(path: store, readOnly: true).metadata(of: document) == DocumentMetadata(
            title: "Brief an Bessel (Entwurf)", date: "1829-05-14", creator: "Carl Friedrich Gauß", identifier: "urn:nbn:de:4711",
            shelfmark: "Cod. Ms. Gauß Briefe A: 12"), "what the browser saved is in the store")
        #expect(FileManager.default.fileExists(atPath: out + "/metadata.png"))
        // The drop: the new file submitted from uploads/, the duplicate skipped and not kept there.
        let names = try Store(path: store, readOnly: true).documentSummaries(after: nil, limit: 10).map(\.document.name)
        #expect(names == ["clean-000.png", "dropped-clean-001.png"], "\(names)")
        let uploads = folder.file("uploads")
        let kept = try FileManager.default.contentsOfDirectory(atPath: uploads).flatMap { batch in
            try FileManager.default.contentsOfDirectory(atPath: uploads + "/" + batch)
        }
        #expect(kept == ["dropped-clean-001.png"], "the duplicate is not left on disk: \(kept)")
    }

    @Test("the UI files are served with the CSP and no inline script or style; other /ui/ names are 404")
    func files() throws {
        let folder = TemporaryDirectory("ui-files")
        let store = folder.file("farm.db")
        let submit = try Run.ocrfarm(["submit", "--store", store, folder.write("broken.png", Array("no image".utf8))])
        #expect(submit.status == 0 || submit.status == 65, "\(submit.stderr)")
        let served = try Served(store: store, log: folder.file("serve.log"))
        let index = try served.call("/")
        #expect(index.status == 200 && index.header("Content-Type") == "text/html; charset=utf-8")
        #expect(index.header("Content-Security-Policy")?.hasPrefix("default-src 'self'") == true)
        #expect(index.body.contains("<script src=\"/ui/app.js\" defer></script>"))
        #expect(!index.body.contains("style=") && !index.body.contains("onclick") && index.body.components(separatedBy: "<script").count == 2)
        let script = try served.call("/ui/app.js")
        #expect(script.status == 200 && script.header("Content-Type") == "text/javascript; charset=utf-8")
        #expect(!script.body.contains("innerHTML") && !script.body.contains("eval("), "page text goes in as textContent only")
        #expect(try served.call("/ui/app.css").header("Content-Type") == "text/css; charset=utf-8")
        // The tab's icon (issue 36: none): linked from the page, and at /favicon.ico where browsers look by themselves.
        #expect(index.body.contains("<link rel=\"icon\" href=\"/ui/favicon.svg\" type=\"image/svg+xml\">"))
        let icon = try served.call("/ui/favicon.svg")
        #expect(icon.status == 200 && icon.header("Content-Type") == "image/svg+xml", "\(icon.head)")
        let parsed = try Run.process("/usr/bin/python3", ["-c", """
            import sys, xml.etree.ElementTree as ET
            svg = ET.fromstring(sys.stdin.read())
            print(svg.tag, svg.get('width'), svg.get('height'))
            """], stdin: Data(icon.body.utf8))
        #expect(parsed.text == "{http://www.w3.org/2000/svg}svg 32 32\n", "\(parsed.text) \(parsed.stderr)")
        let ico = try served.call("/favicon.ico")
        #expect(ico.status == 200 && ico.header("Content-Type") == "image/svg+xml" && ico.body == icon.body)
        #expect(try served.call("/ui/secret.db").status == 404)
        #expect(try served.call("/ui/%2e%2e/farm.db").status == 400)
    }

    @Test("20 browsers polling the dashboard cost at most one store query per second")
    func pollersShareOneQuery() throws {
        let cache = OncePerSecond()
        let started = Clock.monotonicMilliseconds
        let stop = started + 2500
        let done = DispatchGroup()
        for _ in 0..<20 {
            done.enter()
            Thread.detachNewThread {
                while Clock.monotonicMilliseconds < stop {
                    _ = try? cache.get { usleep(2000); return .text(200, "{}") }
                    usleep(1000)
                }
                done.leave()
            }
        }
        done.wait()
        let seconds = Double(Clock.monotonicMilliseconds - started) / 1000
        // One answer made per started second (the first at once), however many pollers.
        #expect(cache.made >= 2 && Double(cache.made) <= seconds.rounded(.up), "\(cache.made) queries in \(seconds) s")
    }
}
