import Testing
import FarmCore
import FarmRuntime
@testable import FarmStore
import TestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `status` (text, JSON, Prometheus, watch, the coordinator's /metrics) and `requeue`, with real processes.
@Suite("Reporting: status and requeue (end to end)", .serialized)
struct ReportingTests {
    func openStore(_ farm: FarmHarness) throws -> Store { try Store(path: farm.storePath, readOnly: true) }

    func json(_ arguments: [String]) throws -> JSON {
        let output = try Run.ocrfarm(arguments)
        #expect(output.status == 0, "\(output.stderr)")
        return try JSON.parse(Array(output.stdout))
    }

    /// A farm whose store holds done pages (4), a page that failed at submit (notes.png, not an image), and queued
    /// pages (3, submitted after the run).
    func mixedFarm() throws -> FarmHarness {
        let farm = FarmHarness()
        let bad = farm.folder.write("notes.png", text: "not a picture\n")
        let output = try Run.ocrfarm(["run", "--store", farm.storePath, "--workers", "1", "--engine", "none", "--document", "first batch",
                                      try TestImages.tinyPages(4, in: farm.folder)])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(try farm.submit([bad]).status == 65)
        #expect(try farm.submit(["--document", "later", try TestImages.tinyPages(3, in: farm.folder, prefix: "later")]).status == 0)
        return farm
    }

    @Test("status shows done, failed and queued pages, per document, with throughput, ETA, failures, stages and workers")
    func statusText() throws {
        let farm = try mixedFarm()
        let text = try Run.ocrfarm(["status", "--store", farm.storePath])
        #expect(text.status == 0, "\(text.stderr)")
        for expected in ["3 documents, 8 pages", "queued 3", "leased 0", "done 4", "failed 1", "over the last minute",
                         "over 10 min", "over 1 h", "overall (since the first submit)", "ETA: none, no coordinator is running (3 pages wait",
                         "documents with pages not done:",
                         "later", "decode-failed 1", "notes.png page 1", "not an image",
                         "workers (silent after 5.0 s unheard):", "gone", "coordinator: not running"] {
            #expect(text.text.contains(expected), "missing '\(expected)' in:\n\(text.text)")
        }
        #expect(!text.text.contains("first batch "), "a finished document is not listed:\n\(text.text)")

        // Workers gone for long are one line, not one each.
        let writer = try Store(path: farm.storePath)
        try writer.write {
            for index in 0..<30 {
                try writer.connection.execute("""
                    INSERT INTO workers (id, host, pid, slots, engine, languages, version, first_seen, last_seen, state, pages_done)
                    VALUES ('old/\(index)', 'old-host', \(index), 1, 'tesseract', 'eng', 'v', \(Clock.now - 7200), \(Clock.now - 3600 - Double(index)), 'gone', 2)
                    """)
            }
        }
        let gone = try Run.ocrfarm(["status", "--store", farm.storePath]).text
        #expect(gone.contains("  30 gone more than 10 min ago (60 pages done between them; the last heard 1 h 0 min ago)"), "\(gone)")
        #expect(!gone.contains("old/7"), "\(gone)")

        let one = try Run.ocrfarm(["status", "--store", farm.storePath, "--document", "later"])
        #expect(one.status == 0)
        #expect(one.text.contains("document 'later'") && one.text.contains("3 pages") && one.text.contains("queued 3"), "\(one.text)")
        #expect(!one.text.contains("decode-failed"), "failures are the document's only:\n\(one.text)")

        let unknown = try Run.ocrfarm(["status", "--store", farm.storePath, "--document", "late"])
        #expect(unknown.status == 66)
        #expect(unknown.stderr.contains("no document named 'late'") && unknown.stderr.contains("'later'"), "\(unknown.stderr)")
        let both = try Run.ocrfarm(["status", "--store", farm.storePath, "--json", "--prometheus"])
        #expect(both.status == 64)
    }

    @Test("status --json has the documented keys and values")
    func statusJSON() throws {
        let farm = try mixedFarm()
        let report = try json(["status", "--store", farm.storePath, "--json"])
        let keys = report.objectValue?.map(\.0) ?? []
        #expect(keys == ["store", "generated_at", "scope", "documents", "pages", "by_document", "by_document_truncated",
                         "throughput", "eta_seconds", "failures", "workers", "stage_times", "liveness", "store_disk",
                         "coordinator_running", "coordinator"])
        #expect(report["documents"]?.intValue == 3)
        #expect(report["pages"]?["total"]?.intValue == 8 && report["pages"]?["queued"]?.intValue == 3)
        #expect(report["pages"]?["done"]?.intValue == 4 && report["pages"]?["failed"]?.intValue == 1)
        #expect(report["scope"]?.isNull == true)
        let listed = report["by_document"]?.arrayValue ?? []
        #expect(listed.count == 2)
        #expect(listed.first?["name"]?.stringValue == "later", "documents with queued pages first: \(listed)")
        #expect(listed.first?["pages"]?["queued"]?.intValue == 3)
        #expect(listed.last?["name"]?.stringValue?.hasSuffix("notes.png") == true, "then those with only failures: \(listed)")
        #expect(listed.last?["pages"]?["failed"]?.intValue == 1)
        for key in ["last_minute", "last_10_minutes", "last_hour", "overall"] {
            #expect(report["throughput"]?[key]?.doubleValue != nil, "throughput.\(key)")
        }
        #expect(report["throughput"]?["last_minute"]?.doubleValue ?? 0 > 0, "the run just finished 4 pages")
        // The run is over: no coordinator reads the 3 pages left, so there is no ETA.
        #expect(report["eta_seconds"] == .null, "\(report["eta_seconds"] ?? .null)")
        let failure = try #require(report["failures"]?[0])
        #expect(failure["code"]?.stringValue == "decode-failed" && failure["count"]?.intValue == 1)
        #expect(failure["example"]?["page"]?.intValue == 1 && failure["example"]?["source"]?.stringValue?.hasSuffix("notes.png") == true)
        #expect(failure["example"]?["message"]?.stringValue?.contains("not an image") == true)
        let worker = try #require(report["workers"]?[0])
        #expect(worker["state"]?.stringValue == "gone" && worker["pages_done"]?.intValue == 4)
        for key in ["id", "host", "pid", "slots", "engine", "pages_failed", "pages_per_second", "last_seen", "seconds_since_seen"] {
            #expect(worker[key] != nil, "workers[].\(key)")
        }
        #expect(report["stage_times"]?["sample"]?.intValue == 4)
        #expect(report["liveness"]?["silent_after_seconds"]?.doubleValue == 5)
        #expect(report["coordinator_running"]?.boolValue == false)

        let scoped = try json(["status", "--store", farm.storePath, "--json", "--document", "first batch"])
        #expect(scoped["scope"]?["document"]?.stringValue == "first batch")
        #expect(scoped["pages"]?["total"]?.intValue == 4 && scoped["eta_seconds"]?.intValue == 0)
        #expect(scoped["failures"]?.arrayValue?.isEmpty == true)
    }

    @Test("status --prometheus is valid exposition text, label values escaped")
    func prometheus() throws {
        let farm = try mixedFarm()
        let odd = "we\"ird\\name\nx"
        #expect(try farm.submit(["--document", odd, try TestImages.tinyPages(1, in: farm.folder, prefix: "odd")]).status == 0)
        let output = try Run.ocrfarm(["status", "--store", farm.storePath, "--prometheus"])
        #expect(output.status == 0, "\(output.stderr)")
        try PrometheusText.check(output.text)
        #expect(output.text.contains(#"ocrfarm_pages{state="queued"} 4"#))
        #expect(output.text.contains(#"ocrfarm_document_pages{document="we\"ird\\name\nx",document_id="4",state="queued"} 1"#),
                "\(output.text)")
        #expect(output.text.contains(#"ocrfarm_failed_pages{code="decode-failed"} 1"#))
        #expect(output.text.contains(#"ocrfarm_coordinator_up 0"#))
    }

    @Test("coordinator --metrics-listen serves /metrics over HTTP, 404 elsewhere, and a silent client holds up neither")
    func metricsEndpoint() throws {
        let farm = FarmHarness()
        try farm.submit([try TestImages.tinyPages(5, in: farm.folder)])
        let port = FarmHarness.freePort()
        let metricsPort = FarmHarness.freePort()
        _ = try farm.startCoordinator(port: port, ["--metrics-listen", "127.0.0.1:\(metricsPort)"])
        _ = try farm.startWorker(port: port, ["--engine", "none", "--slots", "2"], name: "worker")
        #expect(try FarmHarness.wait(seconds: 30) { try openStore(farm).status().count(.done) == 5 }, "\(farm.logs)")

        let served = FarmHarness.wait(seconds: 10) {
            (try? HTTP.request(port: metricsPort, "GET /metrics HTTP/1.0\r\n\r\n").status) == 200
        }
        #expect(served, "\(farm.logs)")
        let metrics = try HTTP.request(port: metricsPort, "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        #expect(metrics.head.contains("text/plain; version=0.0.4"))
        try PrometheusText.check(metrics.body)
        #expect(metrics.body.contains(#"ocrfarm_pages{state="done"} 5"#), "\(metrics.body)")
        #expect(metrics.body.contains("ocrfarm_coordinator_up 1"), "\(metrics.body)")
        #expect(metrics.body.contains(#"condition="alive""#) && metrics.body.contains(#"ocrfarm_worker_slots{"#))
        #expect(try HTTP.request(port: metricsPort, "GET /other HTTP/1.0\r\n\r\n").status == 404)
        #expect(try HTTP.request(port: metricsPort, "POST /metrics HTTP/1.0\r\nContent-Length: 0\r\n\r\n").status == 405)
        #expect(try HTTP.request(port: metricsPort, "hello there\r\n\r\n").status == 400)

        // 30 clients that connect and say nothing: the next scrape is answered at once (Prometheus gives up after
        // 10 s; the hand-written server had taken 60), and the farm keeps working.
        let silent = try (0..<30).map { _ in try HTTP.connect(port: metricsPort) }
        defer { silent.forEach { close($0) } }
        try farm.submit([try TestImages.tinyPages(3, in: farm.folder, prefix: "more")])
        let start = Date()
        #expect(try HTTP.request(port: metricsPort, "GET /metrics HTTP/1.0\r\n\r\n").status == 200)
        #expect(Date().timeIntervalSince(start) < 1, "a scrape behind 30 idle connections took \(Date().timeIntervalSince(start)) s")
        #expect(try FarmHarness.wait(seconds: 30) { try openStore(farm).status().count(.done) == 8 }, "\(farm.logs)")
        farm.stopAll()
    }

    @Test("status --watch on a pipe prints a frame every 2 s until stopped")
    func watch() throws {
        let farm = try mixedFarm()
        let text = try BackgroundProcess(Fixtures.binary, ["status", "--store", farm.storePath, "--watch"],
                                         logPath: farm.folder.file("watch.log"))
        let lines = try BackgroundProcess(Fixtures.binary, ["status", "--store", farm.storePath, "--watch", "--json"],
                                          logPath: farm.folder.file("watch-json.log"))
        let frames = FarmHarness.wait(seconds: 10) {
            text.log.components(separatedBy: "ocrfarm status at ").count - 1 >= 2
                && lines.log.split(separator: "\n").count >= 2
        }
        #expect(frames, "\(text.log)\n\(lines.log)")
        #expect(text.terminate(waiting: 5) == 0)
        #expect(lines.terminate(waiting: 5) == 0)
        #expect(!text.log.contains("\u{1B}["), "no terminal control codes on a pipe")
        for line in lines.log.split(separator: "\n") {
            #expect((try? JSON.parse(String(line)))?["pages"]?["total"]?.intValue == 8, "one JSON report per line: \(line)")
        }
    }

    @Test("requeue --failed --dry-run changes nothing; requeue --failed feeds a running coordinator without a restart")
    func requeueFailedWhileRunning() throws {
        let farm = FarmHarness()
        let folder = farm.folder.file("in")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for index in 0..<3 { farm.folder.write("in/page-\(index).png", TestImages.png(marker: "page \(index)")) }
        let moved = farm.folder.file("in/page-1.png")
        try farm.submit(["--document", "box", folder])
        // The file disappears between submit and dispatch: the page fails with source-changed.
        try FileManager.default.moveItem(atPath: moved, toPath: farm.folder.file("away.png"))
        let port = FarmHarness.freePort()
        let coordinator = try farm.startCoordinator(port: port)
        _ = try farm.startWorker(port: port, ["--engine", "none"], name: "worker")
        #expect(try FarmHarness.wait(seconds: 30) {
            let status = try openStore(farm).status()
            return status.count(.done) == 2 && status.count(.failed) == 1
        }, "\(farm.logs)")
        let failed = try #require(try openStore(farm).pages().first { $0.state == .failed })
        #expect(failed.failureCode == "source-changed")

        let pagesBefore = try openStore(farm).pages()
        let attemptsBefore = try openStore(farm).connection.scalarInt("SELECT count(*) FROM attempts")
        let dry = try Run.ocrfarm(["requeue", "--store", farm.storePath, "--failed", "--dry-run"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.text.contains("would requeue 1 page: 1 failed"), "\(dry.text)")
        #expect(dry.text.contains("box") && dry.text.contains("source-changed") && dry.text.contains("\(failed.id)"), "\(dry.text)")
        #expect(dry.text.contains("dry run: nothing was changed"))
        #expect(try openStore(farm).pages() == pagesBefore)
        #expect(try openStore(farm).connection.scalarInt("SELECT count(*) FROM attempts") == attemptsBefore)

        // The file is back; the running coordinator reads the page again once it is requeued.
        try FileManager.default.moveItem(atPath: farm.folder.file("away.png"), toPath: moved)
        let requeued = try Run.ocrfarm(["requeue", "--store", farm.storePath, "--failed"])
        #expect(requeued.status == 0, "\(requeued.stderr)")
        #expect(requeued.text.contains("requeued 1 page: 1 failed"), "\(requeued.text)")
        #expect(requeued.text.contains("by failure code: source-changed 1"))
        #expect(requeued.text.contains("the running coordinator picks them up now"), "\(requeued.text)")
        #expect(try FarmHarness.wait(seconds: 15) { try openStore(farm).status().count(.done) == 3 }, "\(farm.logs)")
        #expect(coordinator.isRunning, "no restart")
        let history = try openStore(farm).connection.prepare("SELECT outcome FROM attempts WHERE page_id = ? ORDER BY number")
            .rows([.integer(failed.id.rawValue)]) { $0.text(0) }
        #expect(history == ["failed", "requeued", "done"])
        #expect(try openStore(farm).resultCounts().rows == 3)
        let again = try Run.ocrfarm(["requeue", "--store", farm.storePath, "--failed"])
        #expect(again.status == 0 && again.text.contains("nothing to requeue"), "\(again.text)")
        farm.stopAll()
    }

    @Test("requeue filters combine, bad selectors are refused, and a done page named with --page is left alone")
    func requeueSelectors() throws {
        let farm = FarmHarness()
        for document in ["a", "b"] {
            let folder = farm.folder.file(document)
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            farm.folder.write("\(document)/1-text.png", text: "not a picture \(document)\n")
            farm.folder.write("\(document)/2-moved.png", TestImages.png(marker: "\(document) moved"))
            farm.folder.write("\(document)/3-good.png", TestImages.png(marker: "\(document) good"))
            try farm.submit(["--document", document, folder])
            try FileManager.default.removeItem(atPath: farm.folder.file("\(document)/2-moved.png"))
        }
        let port = FarmHarness.freePort()
        _ = try farm.startCoordinator(port: port)
        _ = try farm.startWorker(port: port, ["--engine", "none"], name: "worker")
        #expect(try FarmHarness.wait(seconds: 30) {
            let status = try openStore(farm).status()
            return status.count(.done) + status.count(.failed) == 6
        }, "\(farm.logs)")
        farm.stopAll()
        let store = try openStore(farm)
        let pages = try store.pages()
        #expect(pages.filter { $0.state == .failed }.count == 4 && pages.filter { $0.state == .done }.count == 2, "\(pages)")
        let workerID = try #require(try json(["status", "--store", farm.storePath, "--json"])["workers"]?[0]?["id"]?.stringValue)

        func dry(_ arguments: [String]) throws -> ProcessOutput {
            try Run.ocrfarm(["requeue", "--store", farm.storePath, "--dry-run"] + arguments)
        }
        #expect(try dry(["--failed"]).text.contains("would requeue 4 pages: 4 failed"))
        let combined = try dry(["--failed", "--document", "a", "--error", "source-changed"])
        #expect(combined.text.contains("would requeue 1 page: 1 failed"), "\(combined.text)")
        #expect(combined.text.contains("by failure code: source-changed 1"), "\(combined.text)")
        let byCode = try dry(["--error", "decode-failed"])
        #expect(byCode.text.contains("would requeue 2 pages: 2 failed"), "\(byCode.text)")
        // Pages that failed at submit were never tried by a worker; --worker chooses the ones it tried.
        let byWorker = try dry(["--worker", workerID])
        #expect(byWorker.text.contains("would requeue 2 pages") && byWorker.text.contains("by failure code: source-changed 2"), "\(byWorker.text)")
        let done = try #require(pages.first { $0.state == .done })
        let named = try dry(["--page", "\(done.id)"])
        #expect(named.status == 0 && named.text.contains("page \(done.id) (a page 3) is done"), "\(named.text)")
        #expect(named.text.contains("nothing to requeue"))
        let noCode = try dry(["--error", "timeout"])
        #expect(noCode.text.contains("nothing to requeue") && noCode.text.contains("decode-failed, source-changed"), "\(noCode.text)")

        let bare = try Run.ocrfarm(["requeue", "--store", farm.storePath])
        #expect(bare.status == 64 && bare.stderr.contains("say which pages"), "\(bare.stderr)")
        #expect(try Run.ocrfarm(["requeue", "--store", farm.storePath, "--page", "abc"]).status == 64)
        #expect(try Run.ocrfarm(["requeue", "--store", farm.storePath, "--error", "Bad Code"]).status == 64)
        let noDocument = try Run.ocrfarm(["requeue", "--store", farm.storePath, "--document", "c"])
        #expect(noDocument.status == 66 && noDocument.stderr.contains("no document named 'c'"))
        #expect(try Run.ocrfarm(["requeue", "--store", farm.storePath, "--worker", "nobody"]).status == 66)
        #expect(try Run.ocrfarm(["requeue", "--store", farm.storePath, "--page", "99999"]).status == 66)
        #expect(try store.pages() == pages, "nothing changed")

        let moved = try Run.ocrfarm(["requeue", "--store", farm.storePath, "--document", "b", "--error", "decode-failed"])
        #expect(moved.text.contains("requeued 1 page: 1 failed"), "\(moved.text)")
        #expect(moved.text.contains("no coordinator is running"), "\(moved.text)")
        #expect(try store.pages().filter { $0.state == .queued }.map(\.source.description).first?.hasSuffix("b/1-text.png") == true)
    }

    @Test("requeue --stuck takes back the pages of a silent worker; the coordinator finishes them and never records two results")
    func requeueStuck() throws {
        let farm = FarmHarness()
        let pages = try TestImages.phototestCopies(5, in: farm.folder)
        try farm.submit([pages])
        let port = FarmHarness.freePort()
        let coordinator = try farm.startCoordinator(port: port)
        // Real Tesseract, one slot: pages stay leased for a second or two each.
        let slow = try farm.startWorker(port: port, ["--slots", "1", "--prefetch", "1"], name: "slow")
        #expect(try FarmHarness.wait(seconds: 90) {
            let status = try openStore(farm).status()
            return status.count(.done) >= 1 && status.count(.leased) >= 1
        }, "\(farm.logs)")
        defer {
            kill(coordinator.pid, SIGCONT)
            kill(slow.pid, SIGCONT)
            farm.stopAll()
        }
        // A coordinator stopped between transactions (a wedged coordinator), and a worker that went silent.
        try Signals.stopOutsideTransaction(coordinator, store: farm.storePath)
        kill(slow.pid, SIGSTOP)
        let slowID = try #require(try json(["status", "--store", farm.storePath, "--json"])["workers"]?.arrayValue?
            .first { $0["pid"]?.intValue == Int(slow.pid) }?["id"]?.stringValue)
        let silent = try FarmHarness.wait(seconds: 15) {
            let report = try json(["status", "--store", farm.storePath, "--json"])
            return report["workers"]?.arrayValue?.first { $0["id"]?.stringValue == slowID }?["state"]?.stringValue == "silent"
        }
        #expect(silent)
        let leased = try openStore(farm).pages().filter { $0.state == .leased }.map(\.id)
        #expect(!leased.isEmpty)

        let dry = try Run.ocrfarm(["requeue", "--store", farm.storePath, "--stuck", "--dry-run"])
        #expect(dry.text.contains("would requeue \(leased.count) page\(leased.count == 1 ? "" : "s"): \(leased.count) stuck"), "\(dry.text)")
        #expect(dry.text.contains(slowID))
        #expect(try openStore(farm).pages().filter { $0.state == .leased }.map(\.id) == leased)
        let requeued = try Run.ocrfarm(["requeue", "--store", farm.storePath, "--stuck", "--worker", slowID])
        #expect(requeued.text.contains("requeued \(leased.count) page"), "\(requeued.text)")
        #expect(requeued.text.contains("no coordinator is running"), "its counters are older than the window: \(requeued.text)")
        #expect(try openStore(farm).status().count(.leased) == 0)

        // The coordinator wakes up still believing the silent worker holds the pages; another worker finishes them.
        _ = try farm.startWorker(port: port, ["--engine", "none"], name: "fast")
        kill(coordinator.pid, SIGCONT)
        #expect(try FarmHarness.wait(seconds: 60) { try openStore(farm).status().count(.done) == 5 }, "\(farm.logs)")
        // The silent worker comes back and reports the page it was reading: superseded, not recorded.
        kill(slow.pid, SIGCONT)
        Clock.sleep(milliseconds: 5000)
        let store = try openStore(farm)
        let results = try store.resultCounts()
        #expect(results.pages == 5 && results.rows == 5, "one result per page")
        for page in leased {
            let history = try store.connection.prepare("SELECT outcome FROM attempts WHERE page_id = ? ORDER BY number")
                .rows([.integer(page.rawValue)]) { $0.text(0) }
            #expect(history.prefix(2) == ["interrupted", "requeued"] && history.contains("done"), "\(page): \(history)")
            let attempt = try store.connection.scalarInt("SELECT attempt FROM results WHERE page_id = \(page.rawValue)") ?? 0
            #expect(attempt > 2, "the result is from an attempt after the requeue")
        }
        // The coordinator woke up holding the taken-back attempts: each was refused as superseded (a late
        // result or the loss of the silent worker), none recorded.
        let report = try json(["status", "--store", farm.storePath, "--json"])
        #expect(report["coordinator"]?["superseded"]?.intValue ?? 0 >= leased.count, "\(report)")
        // Real Tesseract results give the recognize stage's time (phototest reads in 90-100 ms on an idle machine, so
        // the bar only tells a real reading from the none engine's zero; 100 had failed on a quiet run at 97.5).
        let recognize = report["stage_times"]?["stages"]?.arrayValue?.first { $0["stage"]?.stringValue == "recognize" }
        #expect(recognize?["p95_ms"]?.doubleValue ?? 0 > 20, "\(report)")
    }

    @Test("status: a Chinese name takes two columns a character, so the counts line up; --watch cuts lines to the terminal (issue 36)")
    func displayWidth() throws {
        let folder = TemporaryDirectory("status-width")
        try FileManager.default.createDirectory(atPath: folder.file("in"), withIntermediateDirectories: true)
        let image = try FileSystem.read(Fixtures.path("formats/page.pnm"))
        folder.write("in/中文文件名称.pnm", image)
        folder.write("in/latin-name.pnm", image)
        folder.write("in/broken-file-with-a-rather-long-name-that-makes-the-failure-line-long.png", text: "not an image\n")
        let store = folder.file("farm.db")
        _ = try Run.ocrfarm(["submit", "--store", store, folder.file("in")])
        /// Each line's width in terminal columns, by Python's East Asian Width (W and F take two).
        func widths(_ text: String) throws -> [Int] {
            let measured = try Run.process("/usr/bin/python3", ["-c", #"""
                import re, sys, unicodedata
                text = re.sub(r'\x1b\[[0-9;?]*[A-Za-z]', '', sys.stdin.read())
                for line in re.split(r'[\r\n]+', text):
                    print(sum(2 if unicodedata.east_asian_width(c) in 'WF' else 0 if unicodedata.combining(c) else 1 for c in line))
                """#], stdin: Data(text.utf8))
            return measured.text.split(separator: "\n").compactMap { Int($0) }
        }
        let status = try Run.ocrfarm(["status", "--store", store])
        let lines = status.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let header = try #require(lines.firstIndex { $0.contains("DOCUMENT") }, "\(status.text)")
        let rows = Array(lines[header...].prefix { $0.hasPrefix("  ") })
        try #require(rows.count == 4 && rows.contains { $0.contains("中文文件名称") }, "\(status.text)")
        let rowWidths = try widths(rows.joined(separator: "\n"))
        #expect(Set(rowWidths).count == 1, "every row as wide as the header: \(rowWidths)\n\(rows.joined(separator: "\n"))")

        // On a 60-column terminal (script(1) gives one), no line of a --watch frame is wider: a wrapped line moved
        // the frame down at each redraw.
        let script = try #require(Run.which("script"))
        let watched = try Run.process(script, ["-qec", #"stty cols 60; timeout -s INT 3 "$OCRFARM" status --store "$STORE" --watch"#,
                                               "/dev/null"], environment: ["OCRFARM": Fixtures.binary, "STORE": store])
        let frameWidths = try widths(watched.text)
        #expect(watched.text.contains("failures:") && frameWidths.count > 10, "\(watched.text)")
        #expect(frameWidths.allSatisfy { $0 <= 60 }, "\(frameWidths.max() ?? 0) columns: \(watched.text)")
    }
}

/// Checks text against the Prometheus exposition format: every sample line matches the grammar and follows
/// its family's TYPE line; TYPE appears once per family.
enum PrometheusText {
    static func check(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let label = #"[a-zA-Z_][a-zA-Z0-9_]*="(\\[\\"n]|[^"\\\n])*""#
        let sample = try Regex(#"^[a-zA-Z_:][a-zA-Z0-9_:]*(\{"# + label + "(," + label + #")*\})? ([-+]?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?|NaN|[-+]Inf)$"#)
        var typed: Set<String> = []
        var samples = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) where !line.isEmpty {
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                #expect(parts.count == 4 && typed.insert(String(parts[2])).inserted, "\(line)", sourceLocation: sourceLocation)
                continue
            }
            if line.hasPrefix("#") { continue }
            samples += 1
            #expect(line.wholeMatch(of: sample) != nil, "not exposition format: \(line)", sourceLocation: sourceLocation)
            var family = String(line.prefix { $0 != "{" && $0 != " " })
            for suffix in ["_sum", "_count", "_bucket"] where family.hasSuffix(suffix) && typed.contains(String(family.dropLast(suffix.count))) {
                family = String(family.dropLast(suffix.count))
            }
            #expect(typed.contains(family), "sample before its TYPE line: \(line)", sourceLocation: sourceLocation)
        }
        #expect(samples > 10, sourceLocation: sourceLocation)
    }
}

/// A raw HTTP client over loopback, with timeouts.
enum Signals {
    /// SIGSTOPs a process that writes to the store, at a moment it holds no write transaction (else retries).
    static func stopOutsideTransaction(_ process: BackgroundProcess, store path: String) throws {
        for _ in 0..<50 {
            kill(process.pid, SIGSTOP)
            Clock.sleep(milliseconds: 50)
            if let store = try? Store(path: path, busyTimeoutMilliseconds: 200), (try? store.write {}) != nil { return }
            kill(process.pid, SIGCONT)
            Clock.sleep(milliseconds: 30)
        }
        Issue.record("could not stop the process outside a transaction")
    }
}
