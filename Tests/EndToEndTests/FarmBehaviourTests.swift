import Testing
import FarmCore
import FarmProtocol
import FarmRuntime
@testable import FarmStore
import TestSupport
import ZeroMQ
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How the farm behaves at its edges: hostile frames, late submissions, graceful shutdown, limits, status.
@Suite("Farm behaviour (end to end)", .serialized)
struct FarmBehaviourTests {
    func openStore(_ farm: FarmHarness) throws -> Store { try Store(path: farm.storePath, readOnly: true) }

    /// How long a wait for the farm may last before it fails: an upper bound, never a pause (the waits end as soon
    /// as their condition holds, a second or two here). It is long because the full suite runs hundreds of tests
    /// and farms at once on two cores with a debug binary, and CI once failed one of these waits at 30 s.
    static let patience = 180.0

    @Test("malformed frames are counted and dropped; the coordinator keeps serving")
    func malformedFrames() throws {
        let farm = FarmHarness()
        let port = FarmHarness.freePort()
        _ = try farm.startCoordinator(port: port)
        let context = try Context()
        let attacker = try Socket(context, type: .dealer)
        try attacker.set(.linger, 0)
        try attacker.connect("tcp://127.0.0.1:\(port)")
        let frames: [[[UInt8]]] = [
            [BadInput.randomBytes(300)],                                                   // random bytes
            [Array("OCRF0".utf8), Array("HELLO".utf8), Array("{}".utf8)],                  // wrong version
            [Array("OCRF1".utf8), Array("CREDIT".utf8), Array("{\"n\":".utf8)],            // truncated header
            [Array("OCRF1".utf8), Array("CREDIT".utf8), [UInt8](repeating: 32, count: 200_000)],  // oversized header
            [Array("OCRF1".utf8), Array("TELEPORT".utf8), Array("{}".utf8)],               // unknown command
            [Array("OCRF1".utf8), Array("RESULT".utf8), Array("{\"page\":1,\"attempt\":1}".utf8)],  // missing frames
        ]
        for message in frames { try attacker.send(message) }
        // Messages from an unknown peer that parse are answered with BYE, not trusted.
        try attacker.send(FrameCodec.encode(.credit(1000)))

        // The coordinator still serves real work afterwards.
        let pages = try TestImages.tinyPages(10, in: farm.folder)
        try farm.submit([pages])
        _ = try farm.startWorker(port: port, ["--engine", "none"], name: "worker")
        #expect(try FarmHarness.wait(seconds: FarmBehaviourTests.patience) { try openStore(farm).status().count(.done) == 10 }, "\(farm.logs)")
        let malformed = try FarmHarness.wait(seconds: FarmBehaviourTests.patience) {
            let counters = try openStore(farm).setting("counters").flatMap { try JSON.parse($0) }
            let total = counters?["malformed"]?.objectValue?.reduce(0) { $0 + ($1.1.intValue ?? 0) } ?? 0
            return total >= frames.count
        }
        #expect(malformed, "\(farm.logs)")
        let status = try Run.ocrfarm(["status", "--store", farm.storePath, "--json"])
        let json = try JSON.parse(Array(status.stdout))
        #expect(json["coordinator"]?["malformed"]?["too-large"]?.intValue == 1, "\(status.text)")
        #expect(json["coordinator"]?["malformed"]?["unknown-command"]?.intValue == 1, "\(status.text)")
        #expect(json["coordinator"]?["malformed"]?["wrong-version"]?.intValue ?? 0 >= 2, "\(status.text)")
        farm.stopAll()
    }

    @Test("pages submitted while the coordinator runs are picked up without a restart")
    func lateSubmission() throws {
        let farm = FarmHarness()
        try farm.submit([try TestImages.tinyPages(5, in: farm.folder, prefix: "first")])
        let port = FarmHarness.freePort()
        _ = try farm.startCoordinator(port: port)
        _ = try farm.startWorker(port: port, ["--engine", "none"], name: "worker")
        #expect(try FarmHarness.wait(seconds: FarmBehaviourTests.patience) { try openStore(farm).status().count(.done) == 5 }, "\(farm.logs)")
        try farm.submit([try TestImages.tinyPages(7, in: farm.folder, prefix: "second")])
        #expect(try FarmHarness.wait(seconds: FarmBehaviourTests.patience) { try openStore(farm).status().count(.done) == 12 }, "\(farm.logs)")
        // SIGTERM stops the coordinator cleanly.
        let coordinator = try #require(farm.processes.first)
        #expect(coordinator.terminate(waiting: FarmBehaviourTests.patience) == 0, "\(farm.logs)")
        #expect(coordinator.log.contains("coordinator stopped"), "\(coordinator.log)")
        farm.stopAll()
    }

    @Test("PDF pages and multi-page TIFF pages travel to the worker and are read one page each")
    func pdfAndTIFF() throws {
        let farm = FarmHarness()
        let pdf = farm.folder.file("two.pdf")
        let made = try Run.ocrfarm(["ocr", Fixtures.phototest, Fixtures.path("tesseract-testdata/phototest-rotated-180.png"),
                                    "--format", "pdf", "--out", pdf])
        #expect(made.status == 0, "\(made.stderr)")
        let output = try Run.ocrfarm(["run", "--store", farm.storePath, "--workers", "1", pdf])
        #expect(output.status == 0, "\(output.stderr)")
        let store = try openStore(farm)
        let pages = try store.pages()
        #expect(pages.count == 2, "\(output.stderr)")
        let first = try #require(try store.text(of: pages[0].id))
        #expect(TextMetrics.characterErrorRate(reference: Fixtures.phototestTruth, hypothesis: first) < 0.05, "\(first)")
        #expect(pages.allSatisfy { $0.state == .done }, "\(pages.map { ($0.state, $0.failureCode ?? "") }) \(output.stderr)")
    }

    @Test("SIGTERM to a worker finishes the page in hand and gives back the ones it had not started")
    func gracefulWorkerShutdown() throws {
        let farm = FarmHarness()
        let pages = try TestImages.phototestCopies(12, in: farm.folder)
        try farm.submit([pages])
        let port = FarmHarness.freePort()
        _ = try farm.startCoordinator(port: port)
        let worker = try farm.startWorker(port: port, ["--slots", "1", "--prefetch", "3"], name: "leaving")
        #expect(try FarmHarness.wait(seconds: 60) { try openStore(farm).status().count(.done) >= 2 })
        let status = worker.terminate(waiting: 30)
        #expect(status == 0, "\(worker.log)")
        #expect(worker.log.contains("worker stopped"))
        let store = try openStore(farm)
        #expect(try store.status().count(.leased) == 0, "nothing stays leased to a worker that left")
        let returned = try store.connection.scalarInt("SELECT count(*) FROM attempts WHERE outcome = 'returned'") ?? 0
        let lost = try store.connection.scalarInt("SELECT count(*) FROM attempts WHERE outcome = 'lost'") ?? 0
        #expect(returned >= 1, "prefetched jobs should be given back")
        #expect(lost == 0, "the page in hand should have been finished, not abandoned")
        // Pages given back do not use up a try.
        #expect(try store.pages().allSatisfy { $0.state == .done || $0.tries == 0 })
        // Another worker finishes the rest.
        _ = try farm.startWorker(port: port, ["--slots", "1"], name: "finisher")
        #expect(try FarmHarness.wait(seconds: 60) { try openStore(farm).status().count(.done) == 12 }, "\(farm.logs)")
        farm.stopAll()
    }

    @Test("a page larger than a job may carry fails with page-too-large; a deleted file with source-changed")
    func dispatchFailures() throws {
        let farm = FarmHarness()
        let folder = farm.folder.file("in")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        farm.folder.write("in/big.png", TestImages.png(width: 200, height: 200, marker: "big"))
        farm.folder.write("in/small.png", TestImages.png(marker: "small"))
        let doomed = farm.folder.write("in/deleted.png", TestImages.png(marker: "deleted"))
        try farm.submit([folder])
        try FileManager.default.removeItem(atPath: doomed)
        let port = FarmHarness.freePort()
        _ = try farm.startCoordinator(port: port, ["--max-page-bytes", "2048"])
        _ = try farm.startWorker(port: port, ["--engine", "none"], name: "worker")
        #expect(try FarmHarness.wait(seconds: 30) {
            let status = try openStore(farm).status()
            return status.count(.done) + status.count(.failed) == 3
        }, "\(farm.logs)")
        let pages = try openStore(farm).pages()
        let byName = Dictionary(uniqueKeysWithValues: pages.map { (FileSystem.baseName($0.source.description), $0) })
        #expect(byName["big.png"]?.failureCode == "page-too-large")
        #expect(byName["deleted.png"]?.failureCode == "source-changed")
        #expect(byName["small.png"]?.state == .done)
        farm.stopAll()
    }

    @Test("status shows pages by state, throughput and workers; --json keeps its keys")
    func status() throws {
        let farm = FarmHarness()
        let bad = farm.folder.write("notes.png", text: "not a picture\n")
        let output = try Run.ocrfarm(["run", "--store", farm.storePath, "--workers", "1", "--engine", "none",
                                      try TestImages.tinyPages(4, in: farm.folder), bad])
        #expect(output.status == 65)
        #expect(output.stderr.contains("done 4 of 5 pages, 1 failed"))
        let text = try Run.ocrfarm(["status", "--store", farm.storePath])
        #expect(text.status == 0)
        #expect(text.text.contains("done 4"))
        #expect(text.text.contains("failed 1"))
        #expect(text.text.contains("decode-failed 1"))
        let json = try JSON.parse(Array(try Run.ocrfarm(["status", "--store", farm.storePath, "--json"]).stdout))
        #expect(json["pages"]?["done"]?.intValue == 4)
        #expect(json["pages"]?["total"]?.intValue == 5)
        #expect(json["failures"]?[0]?["code"]?.stringValue == "decode-failed")
        #expect(json["workers"]?[0]?["pages_done"]?.intValue == 4)
        #expect(json["throughput"]?["overall"]?.doubleValue != nil)
        let missing = try Run.ocrfarm(["status", "--store", farm.folder.file("nothing.db")])
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("no store at"))
    }

    @Test("submit reports resubmissions and unreadable paths, and exits 65 when some files were unusable")
    func submitReports() throws {
        let farm = FarmHarness()
        let pages = try TestImages.tinyPages(3, in: farm.folder)
        let first = try farm.submit([pages])
        #expect(first.status == 0)
        #expect(first.stderr.contains("submitted 3 documents, 3 pages"))
        let again = try farm.submit([pages, farm.folder.file("missing")])
        #expect(again.status == 65)
        #expect(again.stderr.contains("already submitted"))
        #expect(again.stderr.contains("missing: No such file or directory"))
        let forced = try farm.submit(["--force", "--document", "box 1", pages])
        #expect(forced.stderr.contains("submitted 1 document, 3 pages"))
    }
}
