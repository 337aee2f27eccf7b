import Testing
import FarmCore
import FarmRuntime
import FarmStore
import TestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `ocrfarm run` stopped with Ctrl-C and resumed, with real workers and Tesseract.
@Suite("run: interrupted, resumed (end to end)", .serialized)
struct RunResumeTests {
    @Test("Ctrl-C: the summary is the store's count, no page stays leased; run --store with no paths finishes the rest")
    func interruptAndResume() throws {
        let farm = FarmHarness()
        let pages = try TestImages.phototestCopies(10, in: farm.folder, prefix: "box")
        let run = try BackgroundProcess(Fixtures.binary, ["run", "--store", farm.storePath, "--workers", "2", pages],
                                        logPath: farm.folder.file("run.out"), environment: ["OMP_THREAD_LIMIT": "1"])
        // The store is made by the run: until its schema is written, reading it fails (and counts as not yet).
        let someDone = FarmHarness.wait(seconds: 120) {
            ((try? Store(path: farm.storePath, readOnly: true).status().count(.done)) ?? 0) >= 2
        }
        try #require(someDone, "\(run.log)")
        kill(run.pid, SIGINT)
        let deadline = Date().addingTimeInterval(60)
        while run.isRunning && Date() < deadline { usleep(20_000) }
        try #require(!run.isRunning, "run did not stop after Ctrl-C: \(run.log)")
        #expect(run.process.terminationStatus == 130, "\(run.log)")

        let store = try Store(path: farm.storePath, readOnly: true)
        let status = try store.status()
        #expect(status.count(.leased) == 0, "leases given back: \(run.log)")
        let done = status.count(.done), queued = status.count(.queued)
        #expect(done + queued + status.count(.failed) == 10)
        #expect(run.log.contains("done \(done) of 10 pages, 0 failed, \(queued) left queued"), "summary matches the store: \(run.log)")
        #expect(queued > 0, "the test stopped the run before it ended: \(run.log)")

        let resumed = try Run.ocrfarm(["run", "--store", farm.storePath, "--workers", "2"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stderr.contains("done \(queued) of \(queued) pages, 0 failed"), "the pages left: \(resumed.stderr)")
        #expect(try Store(path: farm.storePath, readOnly: true).status().count(.done) == 10)
    }

    @Test("run on a path that is not there makes no store; run with no paths and no store is a usage error")
    func nothingThere() throws {
        let folder = TemporaryDirectory("run-missing")
        let store = folder.file("new.db")
        let missing = try Run.ocrfarm(["run", "--store", store, folder.file("no/such/folder")])
        #expect(missing.status == 66, "\(missing.stderr)")
        #expect(missing.stderr.contains("no/such/folder: no such file or folder"), "\(missing.stderr)")
        #expect(try FileSystem.entries(folder.path).isEmpty, "nothing left behind")
        let none = try Run.ocrfarm(["run", "--store", store])
        #expect(none.status == 64 && none.stderr.contains("no store"), "\(none.stderr)")
    }

    @Test("a page that failed in an earlier run is named by the next run, which exits 0 when nothing new fails (issue 36)")
    func earlierFailures() throws {
        let farm = FarmHarness()
        let bad = farm.folder.write("notes.png", text: "not a picture\n")
        let arguments = ["run", "--store", farm.storePath, "--workers", "1", "--engine", "none",
                         try TestImages.tinyPages(2, in: farm.folder), bad]
        let first = try Run.ocrfarm(arguments)
        #expect(first.status == 65 && first.stderr.contains("done 2 of 3 pages, 1 failed"), "\(first.stderr)")
        #expect(!first.stderr.contains("earlier run"), "\(first.stderr)")
        let again = try Run.ocrfarm(arguments)
        #expect(again.status == 0, "nothing failed in this run: \(again.stderr)")
        #expect(again.stderr.contains("1 page failed in an earlier run; ocrfarm requeue --failed --store \(farm.storePath)"),
                "\(again.stderr)")
        #expect(again.stderr.contains("notes.png"), "the page is still named: \(again.stderr)")
        // A page that fails in this run still fails it, beside the earlier one.
        let broken = farm.folder.write("later.png", text: "not a picture either\n")
        let later = try Run.ocrfarm(arguments + [broken])
        #expect(later.status == 65 && later.stderr.contains("1 page failed in an earlier run"), "\(later.stderr)")
    }
}
