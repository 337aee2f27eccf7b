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

    /// Every document's pages by state in `document_counts` equal a COUNT(*) of its pages.
    static func countsMatchPages(_ connection: Connection) throws -> Bool {
        let drift = try connection.prepare("""
            SELECT count(*) FROM document_counts c LEFT JOIN (
                SELECT document_id, sum(state = 'queued') q, sum(state = 'leased') l, sum(state = 'done') d,
                       sum(state = 'failed') f FROM pages GROUP BY document_id) p ON p.document_id = c.document_id
            WHERE coalesce(p.q, 0) != c.queued OR coalesce(p.l, 0) != c.leased OR coalesce(p.d, 0) != c.done
                  OR coalesce(p.f, 0) != c.failed
            """).first { $0.int(0) }
        return drift == 0
    }

    func output() -> PageOutput {
        PageOutput(engine: "t", text: "x", meanConfidence: 90, width: 1, height: 1, structure: Array("{}".utf8), timings: "{}")
    }

    @Test("leases and results (no trigger since schema 15) keep the counts: in a write, alone, from queued, rolled back")
    func leasesAndResultsKeepTheCounts() throws {
        let first = try add("first.pdf", pages: 5)
        let second = try add("second.pdf", pages: 3)
        // Pages of two documents leased in one write, both ways a page is leased, and one of them done in it, its
        // document given as the coordinator gives it (from the queued page it leased: no query for it).
        let queued = try store.queuedPages(limit: 4, now: now)
        let attempts = try store.write {
            var attempts: [AttemptID] = []
            for page in queued {
                attempts.append(try #require(try store.lease(page, to: worker, now: now, expires: now + 100)))
            }
            attempts.append(try #require(try store.lease(second[0], to: worker, now: now, expires: now + 100)))
            #expect(try store.complete(attempts[3], of: queued[3].document, by: worker, output: output(), startedAt: now,
                                       now: now + 1))
            return attempts
        }
        #expect(attempts.map(\.page) == Array(first.prefix(4)) + [second[0]])
        try check("after leases and a result in one write", documents: 2)
        #expect(try Self.countsMatchPages(store.connection))
        // Outside any transaction: the page and its count change together.
        #expect(try store.complete(attempts[0], of: queued[0].document, by: worker, output: output(), startedAt: now,
                                   now: now + 2))
        #expect(try store.lease(second[1], to: worker, now: now + 2, expires: now + 100) != nil)
        try check("after a result and a lease alone", documents: 2)
        // A page taken back but not handed out again is done from queued by the worker its attempt names; its
        // document is not given (a restarted coordinator does not know it): the store looks it up.
        #expect(try store.recoverLeases(now: now + 3) == 4)
        #expect(try store.complete(attempts[1], by: worker, output: output(), startedAt: now, now: now + 4))
        try check("after a result for a page taken back", documents: 2)
        let summary = try #require(try store.documentSummaries(after: nil, limit: 1).first)
        #expect(summary.pages.done == 3 && summary.pages.queued == 2 && summary.pages.leased == 0)
        // A write that fails is rolled back whole, its count changes with it, and they do not reach the next write.
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try store.write { () throws -> Void in
                _ = try store.lease(first[4], to: worker, now: now + 5, expires: now + 100)
                throw Refused()
            }
        }
        try store.write { try store.setSetting("probe", "1") }
        try check("after a rolled-back lease", documents: 2)
        #expect(try Self.countsMatchPages(store.connection))
        #expect(try store.pageCounters(first[4])?.state == .queued)
    }

    @Test("a store of schema 14 migrates to 15: pages_state gone, the trigger leaves leases and results out, counts exact")
    func migrationFromFourteen() throws {
        let path = folder.file("old.db")
        do {
            let connection = try Connection(path: path)
            try Migrator(Array(Schema.migrations.prefix(14))).migrate(connection)
            try connection.execute("""
                INSERT INTO documents (id, name, source, page_count, submitted_at) VALUES (1, 'old', X'2F6F6C64', 4, 0);
                """)
            for (page, state) in ["queued", "leased", "done", "failed"].enumerated() {
                try connection.execute("""
                    INSERT INTO pages (id, document_id, number, source_path, source_index, source_kind, state, priority,
                                       attempts, lease_worker, updated_at)
                    VALUES (\(page + 1), 1, \(page + 1), X'2F6F6C64', 0, 'image', '\(state)', 0, \(state == "queued" ? 0 : 1),
                            \(state == "leased" ? "'\(worker.rawValue)'" : "NULL"), 0);
                    """)
            }
            #expect(try connection.userVersion == 14)
        }
        let store = try Store(path: path)
        #expect(try store.connection.userVersion == 15)
        let indexes = try store.connection.prepare("SELECT name FROM sqlite_master WHERE type = 'index'").rows([]) { $0.text(0) }
        #expect(!indexes.contains("pages_state") && indexes.contains("pages_unfinished"))
        // The CHECK on a page's state is written without `IN` and still refuses any other state.
        let table = try store.connection.prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'pages'")
            .first { $0.text(0) } ?? ""
        #expect(table.contains("CHECK (state = 'queued' OR state = 'leased' OR state = 'done' OR state = 'failed')"), "\(table)")
        #expect(throws: (any Error).self) { try store.connection.execute("UPDATE pages SET state = 'lost' WHERE id = 1") }
        #expect(try store.integrityCheck() == "ok")
        #expect(try Self.countsMatchPages(store.connection))
        // The page leased before the upgrade finishes, the queued one is leased and finished, the failed one goes
        // back to the queue (through the trigger): the counts follow each.
        #expect(try store.complete(AttemptID(page: PageID(2), number: 1), by: worker, output: output(), startedAt: 0, now: now))
        let attempt = try #require(try store.lease(PageID(1), to: worker, now: now, expires: now + 100))
        #expect(try Self.countsMatchPages(store.connection))
        #expect(try store.complete(attempt, by: worker, output: output(), startedAt: now, now: now + 1))
        var selection = RequeueSelection()
        selection.failed = true
        _ = try store.requeue(selection, liveness: WorkerLiveness(heartbeatMilliseconds: 1000, liveness: 3), now: now + 2)
        #expect(try Self.countsMatchPages(store.connection))
        let summary = try #require(try store.documentSummaries(after: nil, limit: 1).first)
        #expect(summary.pages.done == 3 && summary.pages.queued == 1 && summary.pages.failed == 0)
    }
}
