import Testing
import FarmCore
import FarmPipeline
import FarmRuntime
import Leptonica
import Synchronization
import TestSupport

@Suite("Local batch")
struct LocalBatchTests {
    let folder = TemporaryDirectory("batch-test")

    @Test("pages come back in input order, multi-page TIFFs expand, bad files become failures")
    func orderAndFailures() throws {
        let page = try Pix(contentsOfFile: Fixtures.phototest)
        let tiff = folder.write("three.tif", try Pix.multipageTIFF([page, try page.scaled(by: 0.5), page]))
        let png = folder.write("one.png", try page.encoded(as: .png))
        let bad = folder.write("bad.jpg", Array("not an image".utf8))
        let missing = folder.file("missing.png")
        let paths = [png, bad, tiff, missing, png]

        let batch = LocalBatch(paths: paths, slots: 3) { PageProcessor(engine: .none, pipeline: PipelineOptions.none) }
        var reports: [PageReport] = []
        try batch.run { reports.append($0) }

        #expect(reports.map(\.sequence) == Array(0..<7))
        #expect(reports.map(\.path) == [png, bad, tiff, tiff, tiff, missing, png])
        #expect(reports.map(\.page) == [0, 0, 0, 1, 2, 0, 0])
        #expect(reports[3].pageCount == 3)
        guard case .success(let half) = reports[3].outcome else { Issue.record("page 2 of the TIFF"); return }
        #expect(half.result.width == 320)
        guard case .failure(let decode) = reports[1].outcome, case .failure(let unreadable) = reports[5].outcome else {
            Issue.record("bad and missing files should fail")
            return
        }
        #expect(decode.code == .decodeFailed)
        #expect(unreadable.code == .unreadable)
        #expect(unreadable.message.contains("No such file"))
    }

    @Test("--timeout covers the whole page: a page stuck before recognition fails with timeout, a new slot reads the rest")
    func stuckPageTimesOut() throws {
        let png = folder.write("p.png", try Pix(contentsOfFile: Fixtures.phototest).encoded(as: .png))
        // The second page is held in its slot until the test lets it go, as a stage that cannot be stopped would.
        let release = BlockingQueue<Bool>()
        defer { release.close() }
        let created = Mutex(0)
        let batch = LocalBatch(paths: Array(repeating: png, count: 4), slots: 1,
                               pageOptions: PageOptions(timeoutMilliseconds: 200),
                               beforePage: { job in if job.sequence == 1 { _ = release.pop() } }) {
            created.withLock { $0 += 1 }
            return PageProcessor(engine: .none, pipeline: PipelineOptions.none)
        }
        var reports: [PageReport] = []
        let started = Clock.monotonicMilliseconds
        try batch.run { reports.append($0) }
        let elapsed = Clock.monotonicMilliseconds - started
        #expect(reports.map(\.sequence) == [0, 1, 2, 3])
        guard case .failure(let failure) = reports[1].outcome else { Issue.record("page 2 should time out"); return }
        #expect(failure.code == .timeout && failure.message.contains("200 ms"), "\(failure)")
        #expect([0, 2, 3].allSatisfy { (try? reports[$0].outcome.get()) != nil })
        #expect(elapsed < 3000, "the batch did not wait for the stuck page: \(elapsed) ms")
        #expect(created.withLock { $0 } == 2, "one slot, replaced once")
    }

    @Test("each slot makes its processor (and so its recognizer) once and keeps it for every page")
    func recognizerReuse() throws {
        let png = folder.write("p.png", try Pix(contentsOfFile: Fixtures.phototest).encoded(as: .png))
        let created = Mutex(0)
        let batch = LocalBatch(paths: Array(repeating: png, count: 20), slots: 2) {
            created.withLock { $0 += 1 }
            return PageProcessor(engine: .none, pipeline: PipelineOptions.none)
        }
        var count = 0
        try batch.run { _ in count += 1 }
        #expect(count == 20)
        #expect(created.withLock { $0 } == 2)
    }

    @Test("when no recognizer can be made, the batch fails with the reason")
    func noEngine() {
        let batch = LocalBatch(paths: [Fixtures.phototest], slots: 2,
                               pageOptions: PageOptions(languages: ["nonexistent"])) {
            PageProcessor(engine: .page)
        }
        do {
            try batch.run { _ in }
            Issue.record("should fail")
        } catch {
            #expect(error.message.contains("nonexistent"))
        }
    }

    @Test("with real Tesseract, two slots read phototest and render its PDF page")
    func realEngine() throws {
        let batch = LocalBatch(paths: [Fixtures.phototest, Fixtures.phototest], slots: 2, outputs: [.pdf]) {
            PageProcessor(engine: .page)
        }
        var reports: [PageReport] = []
        try batch.run { reports.append($0) }
        #expect(reports.count == 2)
        #expect(reports.map(\.sequence) == [0, 1])
        for report in reports {
            let page = try report.outcome.get()
            let cer = TextMetrics.characterErrorRate(reference: Fixtures.phototestTruth, hypothesis: page.result.text)
            #expect(cer < 0.02)
            #expect(page.result.timings.map(\.stage) == ["decode", "segment", "rectify", "orient", "deskew", "dewarp", "enhance",
                                                         "scale", "recognize", "render", "analyze"])
            #expect(page.result.language == "eng")
            #expect(page.result.keywords.contains("quick") && !page.result.keywords.contains("the"))
            #expect(page.rendering(.pdf)?.starts(with: Array("%PDF".utf8)) == true)
        }
    }
}
