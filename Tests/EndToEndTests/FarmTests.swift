import Testing
import FarmCore
@testable import FarmStore
import FarmRender
import TestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The farm as separate processes over TCP loopback: coordinator, workers, submit, status.
@Suite("Farm (end to end)", .serialized)
struct FarmTests {
    /// Heartbeats fast enough that a lost worker is noticed in well under a second.
    static let fast = ["--heartbeat", "200"]

    func openStore(_ farm: FarmHarness) throws -> Store { try Store(path: farm.storePath, readOnly: true) }

    func waitForAll(_ farm: FarmHarness, pages: Int, seconds: Double) throws -> Bool {
        try FarmHarness.wait(seconds: seconds) {
            let status = try openStore(farm).status()
            return status.count(.done) + status.count(.failed) == pages
        }
    }

    @Test("200 pages through 2 workers on --engine none: every page done, exactly one result each")
    func nullEngine() throws {
        let farm = FarmHarness()
        let first = try TestImages.tinyPages(1, in: farm.folder, prefix: "first")
        let pages = try TestImages.tinyPages(199, in: farm.folder)
        #expect(try farm.submit([first]).status == 0)
        let port = FarmHarness.freePort()
        _ = try farm.startCoordinator(port: port)
        _ = try farm.startWorker(port: port, ["--engine", "none", "--slots", "2"], name: "w1")
        _ = try farm.startWorker(port: port, ["--engine", "none", "--slots", "2"], name: "w2")
        // Both workers in before most of the pages (on a busy machine one worker could otherwise finish them
        // alone); the running coordinator picks the submission up.
        #expect(try FarmHarness.wait(seconds: 30) { try openStore(farm).status().workers.count == 2 }, "\(farm.logs)")
        #expect(try farm.submit([pages]).status == 0)
        #expect(try waitForAll(farm, pages: 200, seconds: 30), "\(farm.logs)")
        let status = try openStore(farm).status()
        #expect(status.count(.done) == 200)
        let results = try openStore(farm).resultCounts()
        #expect(results.pages == 200 && results.rows == 200)
        #expect(status.workers.count == 2)
        #expect(status.workers.reduce(0) { $0 + $1.pagesDone } == 200)
        farm.stopAll()
    }

    @Test("20 real pages through 2 Tesseract workers: every page done and read correctly")
    func realEngine() throws {
        let farm = FarmHarness()
        let pages = try TestImages.phototestCopies(20, in: farm.folder)
        #expect(try farm.submit([pages]).status == 0)
        let port = FarmHarness.freePort()
        _ = try farm.startCoordinator(port: port)
        _ = try farm.startWorker(port: port, ["--slots", "1"], name: "w1")
        _ = try farm.startWorker(port: port, ["--slots", "1"], name: "w2")
        #expect(try waitForAll(farm, pages: 20, seconds: 120), "\(farm.logs)")
        let store = try openStore(farm)
        #expect(try store.status().count(.done) == 20)
        let results = try store.resultCounts()
        #expect(results.pages == 20 && results.rows == 20)
        for page in try store.pages() {
            let text = try #require(try store.text(of: page.id))
            #expect(TextMetrics.characterErrorRate(reference: Fixtures.phototestTruth, hypothesis: text) < 0.02)
            // The worker's analysis travels in the stored structure.
            let structure = try #require(try store.structure(of: page.id))
            #expect(structure["language"]?.stringValue == "eng")
            let keywords = structure["keywords"]?.arrayValue?.compactMap { $0.stringValue } ?? []
            #expect(keywords.contains("quick") && !keywords.contains("the"), "\(keywords)")
            // The page PDF is stored with the result (`--outputs` defaults to pdf); hOCR, ALTO, PAGE and JSON are
            // rendered from the stored page model (render on demand), each a whole one-page document.
            let stored = try store.artifacts(of: page.id)
            #expect(Set(stored.keys) == ["pdf"])
            #expect(stored["pdf"]?.starts(with: Array("%PDF-".utf8)) == true)
            let model = try #require(try store.model(of: page.id))
            let artifacts = Dictionary(PageArtifacts.render(model, outputs: PageArtifacts.renderedOnDemand)
                .map { ($0.0.rawValue, $0.1) }, uniquingKeysWith: { first, _ in first })
            #expect(Set(artifacts.keys) == ["hocr", "alto", "page", "json"])
            for (name, root) in [("hocr", "</html>"), ("alto", "</alto>"), ("page", "</PcGts>")] {
                #expect(String(decoding: artifacts[name] ?? [], as: UTF8.self).contains(root), "\(name)")
            }
            let json = try JSON.parse(String(decoding: artifacts["json"] ?? [], as: UTF8.self))
            #expect(json["text"]?.stringValue == text && json["words"]?.arrayValue?.isEmpty == false)
        }
        // The stored PDF page is searchable: pdftotext gives its text back.
        let first = try #require(try store.pages().first)
        let pdf = farm.folder.write("stored.pdf", try store.artifacts(of: first.id)["pdf"] ?? [])
        let extracted = try Run.process("/usr/bin/pdftotext", [pdf, "-"]).text
        #expect(TextMetrics.characterErrorRate(reference: Fixtures.phototestTruth, hypothesis: extracted) < 0.03)
        farm.stopAll()
    }

    @Test("kill -9 of a worker mid-batch: its pages come back and finish on the other worker")
    func workerKilled() throws {
        let farm = FarmHarness()
        let pages = try TestImages.phototestCopies(30, in: farm.folder)
        try farm.submit([pages])
        let port = FarmHarness.freePort()
        _ = try farm.startCoordinator(port: port, Self.fast)
        let victim = try farm.startWorker(port: port, ["--slots", "1", "--prefetch", "2"] + Self.fast, name: "victim")
        _ = try farm.startWorker(port: port, ["--slots", "1"] + Self.fast, name: "survivor")
        // Kill once the victim has pages in hand and some work is done.
        #expect(try FarmHarness.wait(seconds: 60) { try openStore(farm).status().count(.done) >= 6 })
        victim.kill9()
        let killedAt = Date()
        #expect(try waitForAll(farm, pages: 30, seconds: 120), "\(farm.logs)")
        let store = try openStore(farm)
        #expect(try store.status().count(.done) == 30)
        let results = try store.resultCounts()
        #expect(results.pages == 30 && results.rows == 30)
        // The victim's leases were noticed within the liveness window and retried.
        let lost = try store.connection.scalarInt("SELECT count(*) FROM attempts WHERE outcome = 'lost'") ?? 0
        #expect(lost >= 1, "the killed worker held pages: \(farm.logs)")
        let firstRetryAfterLoss = try store.connection.scalarText(
            "SELECT min(ended_at) FROM attempts WHERE outcome = 'lost'").flatMap(Double.init) ?? 0
        #expect(firstRetryAfterLoss - killedAt.timeIntervalSince1970 < 3, "lost leases should be reclaimed within ~0.6 s")
        farm.stopAll()
    }

    @Test("kill -9 of the coordinator mid-batch, then a restart: the batch completes and the store is sound")
    func coordinatorKilled() throws {
        let farm = FarmHarness()
        let pages = try TestImages.phototestCopies(30, in: farm.folder)
        try farm.submit([pages])
        let port = FarmHarness.freePort()
        let first = try farm.startCoordinator(port: port, Self.fast)
        _ = try farm.startWorker(port: port, ["--slots", "1"] + Self.fast, name: "w1")
        _ = try farm.startWorker(port: port, ["--slots", "1"] + Self.fast, name: "w2")
        #expect(try FarmHarness.wait(seconds: 60) { try openStore(farm).status().count(.done) >= 5 })
        first.kill9()
        Thread.sleep(forTimeInterval: 0.5)
        _ = try farm.startCoordinator(port: port, Self.fast, name: "coordinator-2")
        #expect(try waitForAll(farm, pages: 30, seconds: 120), "\(farm.logs)")
        let store = try openStore(farm)
        #expect(try store.status().count(.done) == 30)
        let results = try store.resultCounts()
        #expect(results.pages == 30 && results.rows == 30)
        #expect(try store.integrityCheck() == "ok")
        farm.stopAll()
    }

    @Test("a page that kills its worker every time ends failed with worker-lost; every other page is done")
    func poisonPage() throws {
        let farm = FarmHarness()
        let pages = try TestImages.phototestCopies(6, in: farm.folder)
        try FileManager.default.moveItem(atPath: pages + "/photo-3.tif", toPath: pages + "/poison.tif")
        let output = try Run.ocrfarm(["run", "--store", farm.storePath, "--workers", "2", "--heartbeat", "200",
                                      "--retry-delay", "0.1", pages],
                                     environment: ["OCRFARM_TEST_CRASH_ON": "poison"])
        #expect(output.status == 65, "\(output.stderr)")
        let store = try openStore(farm)
        let all = try store.pages()
        #expect(all.count == 6)
        let poison = try #require(all.first { $0.source.description.hasSuffix("poison.tif") })
        #expect(poison.state == .failed)
        #expect(poison.failureCode == "worker-lost")
        #expect(poison.attempts == 3)
        #expect(all.filter { $0.state == .done }.count == 5)
        #expect(output.stderr.contains("worker-lost"))
    }

    @Test("without the test trigger, the same page is read normally")
    func poisonTriggerIsOff() throws {
        let farm = FarmHarness()
        let pages = try TestImages.phototestCopies(1, in: farm.folder)
        try FileManager.default.moveItem(atPath: pages + "/photo-0.tif", toPath: pages + "/poison.tif")
        let output = try Run.ocrfarm(["run", "--store", farm.storePath, "--workers", "1", pages])
        #expect(output.status == 0, "\(output.stderr)")
    }
}
