import FarmCore
import SQLite

/// One reading of a page: the current one (`results`) or an earlier one (`result_history`, schema 8).
public struct PageReading: Sendable, Equatable {
    public let page: PageID
    public let attempt: Int
    public let engine: String
    public let text: String
    public let meanConfidence: Double
    public let finishedAt: Double
    /// The options it was read with, as stored (JSON); nil for the current reading (the document's options).
    public let optionsJSON: String?
    /// When a newer reading replaced it; nil for the current reading, and for one whose reread has not landed yet.
    public let replacedAt: Double?
    public let current: Bool
}

/// What `reread` chose in a document.
public struct RereadPlan: Sendable, Equatable {
    public let document: DocumentRecord
    /// Done pages: read again.
    public let done: Int
    /// Pages not done (queued, being read, failed): left as they are, read with the new options when they are read.
    public let other: Int
}

extension Store {
    /// What `reread(_:options:)` would do to `document`. Reads only.
    public func rereadPlan(_ document: DocumentRecord) throws -> RereadPlan {
        let counts = try counts(of: [document.id])
        let done = counts[.done] ?? 0
        return RereadPlan(document: document, done: done, other: counts.values.reduce(0, +) - done)
    }

    /// Queues the done pages of `document` again, to be read with `options` (they become the document's options).
    /// Their results stay current (status, search and export use them) until the new ones land, and are copied to
    /// the history now with the options they were read with. One transaction; returns the pages queued.
    @discardableResult
    public func reread(_ document: DocumentID, options: PageOptions, now: Double = Clock.now) throws -> Int {
        try write {
            let id = SQLiteValue.integer(document.rawValue)
            // The page model goes with its result (schema 11: every store written to is migrated first).
            try connection.cached("""
                INSERT OR IGNORE INTO result_history (page_id, attempt, worker_id, engine, text, mean_confidence, width, height,
                                                      structure, timings, finished_at, options, replaced_at, model)
                SELECT r.page_id, r.attempt, r.worker_id, r.engine, r.text, r.mean_confidence, r.width, r.height, r.structure,
                       r.timings, r.finished_at, d.options, NULL, r.model
                FROM results r JOIN pages p ON p.id = r.page_id JOIN documents d ON d.id = p.document_id
                WHERE p.document_id = ? AND p.state = 'done'
                """).execute([id])
            try connection.cached("""
                INSERT OR IGNORE INTO attempts (page_id, number, worker_id, started_at, ended_at, outcome, code, message)
                SELECT id, attempts + 1, NULL, NULL, ?, 'requeued', NULL, 'queued again by ocrfarm reread'
                FROM pages WHERE document_id = ? AND state = 'done'
                """).execute([.real(now), id])
            try connection.cached("UPDATE documents SET options = ? WHERE id = ?").execute([.text(options.json.rendered), id])
            return try connection.cached("""
                UPDATE pages SET state = 'queued', attempts = attempts + 1, tries = 0, not_before = 0, lease_worker = NULL,
                                 leased_at = NULL, lease_expires = NULL, updated_at = ?
                WHERE document_id = ? AND state = 'done'
                """).execute([.real(now), id])
        }
    }

    /// Moves the page's current result (if any) to the history: called in the transaction that records its new
    /// result. A result `reread` copied there already keeps its row (and its options); it gets `replaced_at`.
    /// Returns whether the page had a result.
    @discardableResult
    func archiveResult(of page: PageID, now: Double) throws -> Bool {
        let id = SQLiteValue.integer(page.rawValue)
        guard try connection.cached("SELECT 1 FROM results WHERE page_id = ?").first([id], { _ in true }) ?? false else { return false }
        guard try connection.userVersion >= 8 else { return true }
        let model = try hasModels() ? "r.model" : "NULL"
        try connection.cached("""
            INSERT OR IGNORE INTO result_history (page_id, attempt, worker_id, engine, text, mean_confidence, width, height,
                                                  structure, timings, finished_at, options, replaced_at\(model == "NULL" ? "" : ", model"))
            SELECT r.page_id, r.attempt, r.worker_id, r.engine, r.text, r.mean_confidence, r.width, r.height, r.structure,
                   r.timings, r.finished_at, d.options, ?\(model == "NULL" ? "" : ", r.model")
            FROM results r JOIN pages p ON p.id = r.page_id JOIN documents d ON d.id = p.document_id
            WHERE r.page_id = ?
            """).execute([.real(now), id])
        try connection.cached("""
            UPDATE result_history SET replaced_at = ?
            WHERE page_id = ? AND attempt = (SELECT attempt FROM results WHERE page_id = ?) AND replaced_at IS NULL
            """).execute([.real(now), id, id])
        try connection.cached("DELETE FROM results WHERE page_id = ?").execute([id])
        return true
    }

    /// Every reading of `page`, oldest first: the earlier ones from the history, the current one last.
    public func readings(of page: PageID) throws -> [PageReading] {
        let id = SQLiteValue.integer(page.rawValue)
        var readings: [PageReading] = []
        if try connection.userVersion >= 8 {
            readings = try connection.cached("""
                SELECT attempt, engine, text, mean_confidence, finished_at, options, replaced_at FROM result_history
                WHERE page_id = ? AND attempt NOT IN (SELECT attempt FROM results WHERE page_id = ?) ORDER BY attempt
                """).rows([id, id]) {
                PageReading(page: page, attempt: $0.int(0), engine: $0.text(1), text: $0.text(2), meanConfidence: $0.double(3),
                            finishedAt: $0.double(4), optionsJSON: $0.optionalText(5), replacedAt: $0.optionalDouble(6), current: false)
            }
        }
        if let current = try connection.cached("""
            SELECT attempt, engine, text, mean_confidence, finished_at FROM results WHERE page_id = ?
            """).first([id], {
            PageReading(page: page, attempt: $0.int(0), engine: $0.text(1), text: $0.text(2), meanConfidence: $0.double(3),
                        finishedAt: $0.double(4), optionsJSON: nil, replacedAt: nil, current: true)
        }) {
            readings.append(current)
        }
        return readings
    }

    /// Pages of `document` being read again (queued or leased) that still have their earlier result: export
    /// writes that result until the new one lands.
    public func pagesWithEarlierResult(of document: DocumentID) throws -> Set<PageID> {
        Set(try connection.cached("""
            SELECT p.id FROM pages p JOIN results r ON r.page_id = p.id
            WHERE p.document_id = ? AND p.state IN ('queued', 'leased')
            """).rows([.integer(document.rawValue)]) { PageID($0.int64(0)) })
    }
}
