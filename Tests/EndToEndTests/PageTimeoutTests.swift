import Testing
import FarmCore
@testable import FarmStore
import TestSupport
import Foundation

/// `--timeout` covers the whole page, not only recognition (issue 18 item 7): a page stuck in a stage that cannot
/// be interrupted fails with `timeout` soon after its limit, and its worker goes on with the other pages.
@Suite("Page time limit (end to end)", .serialized)
struct PageTimeoutTests {
    /// The attempts of `pages`: how long each was leased, its outcome and failure code.
    func attempts(of pages: [PageRecord], in store: Store) throws -> [(seconds: Double, outcome: String, code: String)] {
        let ids = Set(pages.map(\.id.rawValue))
        return try store.connection.prepare("SELECT page_id, ended_at - started_at, outcome, code FROM attempts")
            .rows([]) { row in (page: row.int(0), seconds: row.double(1), outcome: row.text(2), code: row.text(3)) }
            .filter { ids.contains(Int64($0.page)) }
            .map { ($0.seconds, $0.outcome, $0.code) }
    }

    @Test("--timeout 1 on pages stuck before recognition: each attempt ends within 2 s as timeout, the worker's slot is replaced and the other pages are read")
    func stuckPagesTimeOut() throws {
        let farm = FarmHarness()
        // Six distinct copies (the store refuses content it has): two are moved aside to be the stuck pages.
        let pages = try TestImages.phototestCopies(6, in: farm.folder)
        let stalled = farm.folder.file("stall")
        try FileManager.default.createDirectory(atPath: stalled, withIntermediateDirectories: true)
        for index in [0, 3] {
            try FileManager.default.moveItem(atPath: pages + "/photo-\(index).tif", toPath: stalled + "/stall-\(index).tif")
        }
        // The stuck pages carry the time limit; the others none, so a slow machine cannot fail them.
        #expect(try farm.submit(["--timeout", "1", stalled]).status == 0)
        #expect(try farm.submit([pages]).status == 0)
        let port = FarmHarness.freePort()
        _ = try farm.startCoordinator(port: port, ["--heartbeat", "200", "--retry-delay", "0.1"])
        // One slot and no prefetch: a page's lease is its time in the slot, so the store's attempt times show how
        // long a slot held it. The hook holds each stall-* page 20 s before reading it, as a stage that cannot be
        // stopped would; six attempts leave six slots given up, under --max-stuck.
        let worker = try farm.startWorker(port: port, ["--slots", "1", "--prefetch", "0", "--max-stuck", "8",
                                                       "--heartbeat", "200"],
                                          name: "worker", environment: ["OCRFARM_TEST_STALL_ON": "stall-"])
        let finished = try FarmHarness.wait(seconds: 120) {
            let status = try Store(path: farm.storePath, readOnly: true).status()
            return status.count(.done) + status.count(.failed) == 6
        }
        #expect(finished, "\(farm.logs)")
        let store = try Store(path: farm.storePath, readOnly: true)
        let all = try store.pages()
        let stuck = all.filter { $0.source.description.contains("stall-") }
        #expect(stuck.count == 2)
        for page in stuck {
            #expect(page.state == .failed && page.failureCode == "timeout", "\(page)")
            #expect(page.attempts == 3, "a timeout is retried like recognition's own")
        }
        let others = all.filter { !$0.source.description.contains("stall-") }
        #expect(others.count == 4 && others.allSatisfy { $0.state == .done })
        for page in others {
            let text = try #require(try store.text(of: page.id))
            #expect(TextMetrics.characterErrorRate(reference: Fixtures.phototestTruth, hypothesis: text) < 0.02)
        }
        // No slot held a stuck page longer than the time limit and a second.
        let held = try attempts(of: stuck, in: store)
        #expect(held.count == 6, "\(held)")
        for (seconds, outcome, code) in held {
            #expect(seconds <= 2.0 && outcome == "failed" && code == "timeout", "\(held)")
        }
        // The worker gave each stuck slot up and carried on: it is still running, with no exit to replace it.
        #expect(worker.isRunning)
        #expect(worker.log.components(separatedBy: "slot given up and replaced").count - 1 == 6, "\(worker.log)")
        farm.stopAll()
    }

    @Test("ocrfarm run --timeout: its worker processes give up stuck slots, leave with 75 past --max-stuck and are replaced; the batch ends")
    func runReplacesStuckWorkers() throws {
        let farm = FarmHarness()
        let stalled = try TestImages.phototestCopies(3, in: farm.folder, prefix: "stall")
        // Tiny pages read in milliseconds, far inside the limit even on a busy machine.
        let tiny = try TestImages.tinyPages(3, in: farm.folder)
        for index in 0..<3 {
            try FileManager.default.moveItem(atPath: tiny + "/tiny-\(index).png", toPath: stalled + "/tiny-\(index).png")
        }
        // Tesseract: auto would give the tiny pages (under 20 characters) to the neural engine, whose models load in
        // the slot at its first page: seconds, past this test's limit.
        let output = try Run.ocrfarm(["run", "--store", farm.storePath, "--workers", "1", "--heartbeat", "200",
                                      "--retry-delay", "0.1", "--timeout", "2", "--engine", "tesseract", stalled],
                                     environment: ["OCRFARM_TEST_STALL_ON": "stall-"])
        #expect(output.status == 65, "\(output.stderr)")
        let store = try Store(path: farm.storePath, readOnly: true)
        let all = try store.pages()
        #expect(all.count == 6)
        let stuck = all.filter { $0.source.description.contains("stall-") }
        #expect(stuck.count == 3 && stuck.allSatisfy { $0.state == .failed && $0.failureCode == "timeout" && $0.attempts == 3 },
                "\(stuck)")
        #expect(all.filter { $0.state == .done }.count == 3)
        // A worker leaving over stuck slots still reports the timeout that made it leave: no attempt is lost.
        let tries = try attempts(of: stuck, in: store)
        #expect(tries.count == 9 && tries.allSatisfy { $0.outcome == "failed" && $0.code == "timeout" }, "\(tries)")
        // One slot per worker, at most 2 given-up slots running: nine stuck attempts make the worker leave with 75
        // (20 s stalls outlast the attempts), and `run` starts another each time.
        let log = (try? String(contentsOfFile: farm.storePath + ".log", encoding: .utf8)) ?? ""
        #expect(log.contains("exiting for a fresh worker") && log.contains("exit_status=75"), "\(log)")
        #expect(log.components(separatedBy: "slot given up and replaced").count - 1 == 9, "\(log)")
    }
}
