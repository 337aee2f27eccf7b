import Testing
import FarmCore
@testable import FarmStore
import SQLite
import TestSupport

@Suite("Store: per-document counts (schema 12)")
struct DocumentCountsTests {
    let folder = TemporaryDirectory("document-counts-test")
    let store: Store
    let worker = WorkerID("host-a/1/x")
    let now = 10_000.0

    init() throws {
        store = try Store(path: folder.file("farm.db"))
    }

    func add(_ name: String, pages count: Int) throws -> [PageID] {
        let pages = (0..<count).map { NewPage(source: RawPath("/data/\(name)-\($0).png"), index: 0, kind: .image) }
        let id = try store.add([NewDocument(name: name, source: RawPath("/data/\(name)"), contentHash: name, priority: 0,
                                            options: PageOptions(), pages: pages)], now: now - 100)[0]
        return try store.pages(of: [id]).map(\.id)
    }

    /// Reads `pages`, each with the quality figure given (nil: a result that measured none).
    func finish(_ pages: [(PageID, Double?)], at: Double) throws {
        try store.write {
            for (page, quality) in pages {
                let attempt = try #require(try store.lease(page, to: worker, now: at - 1, expires: at + 100))
                let structure = quality.map { #"{"language":"eng","quality":{"figure":\#($0)}}"# } ?? #"{"language":"eng"}"#
                let output = PageOutput(engine: "t", text: "x", meanConfidence: 90, width: 1, height: 1,
                                        structure: Array(structure.utf8), timings: "{}")
                #expect(try store.complete(attempt, by: worker, output: output, startedAt: at - 1, now: at))
            }
        }
    }

    /// Every document's summary from `document_counts` equals the one counted from its pages and results.
    func check(_ label: String, documents expected: Int) throws {
        let kept = try store.documentSummaries(after: nil, limit: 100)
        #expect(kept.count == expected, "\(label)")
        for summary in kept {
            let counted = try store.countedSummary(of: summary.document)
            #expect(summary.pages == counted.pages, "\(label): \(summary.document.name) pages")
            #expect(summary.qualityMeasured == counted.qualityMeasured, "\(label): \(summary.document.name) measured")
            #expect(summary.qualityMin == counted.qualityMin, "\(label): \(summary.document.name) min")
            #expect((summary.qualityMean == nil) == (counted.qualityMean == nil), "\(label): \(summary.document.name) mean")
            if let mean = summary.qualityMean, let recount = counted.qualityMean {
                #expect(abs(mean - recount) < 1e-6, "\(label): \(summary.document.name) mean \(mean) vs \(recount)")
            }
        }
        // No row is left for a document that is gone.
        let rows = try store.connection.prepare("SELECT count(*) FROM document_counts").first { $0.int(0) }
        #expect(rows == expected, "\(label): document_counts rows")
    }

    @Test("pages by state and quality kept by triggers equal a recount after submit, complete, fail, requeue, reread and delete")
    func countsEqualARecount() throws {
        #expect(try store.connection.userVersion >= 12)
        let first = try add("first.pdf", pages: 6)
        let second = try add("second.pdf", pages: 3)
        let third = try add("third.pdf", pages: 2)
        try check("after submit", documents: 3)
        let firstSummary = try #require(try store.documentSummaries(after: nil, limit: 1).first)
        #expect(firstSummary.pages.queued == 6 && firstSummary.qualityMeasured == 0 && firstSummary.qualityMin == nil)

        try finish([(first[0], 0.9), (first[1], 0.4), (first[2], nil), (first[3], 0.75), (second[0], 0.5), (third[0], 0.3)],
                   at: now - 50)
        try store.write {
            let attempt = try #require(try store.lease(first[4], to: worker, now: now - 40, expires: now + 100))
            _ = try store.fail(attempt, by: worker, failure: PageFailure(stage: "decode", code: .timeout, message: "slow"),
                               policy: RetryPolicy(maxAttempts: 1), startedAt: now - 40, now: now - 39)
            _ = try store.lease(second[1], to: worker, now: now - 38, expires: now + 100)
        }
        try check("after complete, fail and a lease", documents: 3)
        let counts = try #require(try store.documentSummaries(after: nil, limit: 1).first)
        #expect(counts.pages.done == 4 && counts.pages.failed == 1 && counts.pages.queued == 1)
        #expect(counts.qualityMeasured == 3 && counts.qualityMin == 0.4)
        #expect(abs((counts.qualityMean ?? 0) - (0.9 + 0.4 + 0.75) / 3) < 1e-9)

        var selection = RequeueSelection()
        selection.failed = true
        _ = try store.requeue(selection, liveness: WorkerLiveness(heartbeatMilliseconds: 1000, liveness: 3), now: now - 30)
        try check("after requeue", documents: 3)

        // Read again: the lowest result (0.4) is replaced by a better one, so the lowest is looked for again; the
        // one that measured nothing now measures.
        let firstDocument = try #require(try store.documents(named: "first.pdf").first)
        try store.reread(firstDocument.id, options: PageOptions(), now: now - 20)
        try check("after reread queued the done pages", documents: 3)
        try finish([(first[1], 0.95), (first[2], 0.6)], at: now - 10)
        try check("after two rereads landed", documents: 3)
        let reread = try #require(try store.documentSummaries(after: nil, limit: 1).first)
        #expect(reread.qualityMin == 0.6 && reread.qualityMeasured == 4)

        _ = try store.delete([try #require(try store.documents(named: "third.pdf").first).id])
        try check("after deleting a document", documents: 2)
        _ = try add("fourth.pdf", pages: 1)
        try check("after another submit", documents: 3)
    }
}
