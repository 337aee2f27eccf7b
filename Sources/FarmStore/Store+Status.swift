import FarmCore
import SQLite

/// A worker as the store last saw it.
public struct WorkerRecord: Sendable, Equatable {
    public let id: WorkerID
    public let host: String
    public let pid: Int
    public let slots: Int
    public let engine: String
    public let languages: String
    public let firstSeen: Double
    public let lastSeen: Double
    public let state: String
    public let pagesDone: Int
    public let pagesFailed: Int
}

extension FarmReport {
    /// Pages in `state` (in scope).
    public func count(_ state: PageState) -> Int { pages[state] }
    /// All pages (in scope).
    public var totalPages: Int { pages.total }
    /// The failure groups by code, most frequent first: the name `status()` callers used before it returned the
    /// report.
    public var failuresByCode: [FailureGroup] { failures }
}

/// One page, for reports and tests.
public struct PageRecord: Sendable, Equatable {
    public let id: PageID
    public let document: DocumentID
    public let number: Int
    public let source: RawPath
    public let state: PageState
    public let attempts: Int
    public let tries: Int
    public let failureCode: String?
    public let failureMessage: String?
}

extension Store {
    /// The whole farm's report (`report(now:)` with no scope): what `status` prints, the page counts `backup`
    /// and `health --store` print, and what tests poll. One type for both: a separate status snapshot had its own
    /// queries for the same counts, workers and failures.
    public func status(now: Double = Clock.now) throws -> FarmReport {
        try report(now: now)
    }

    /// Pages of the given documents (all pages when `documents` is nil), in document and page order.
    public func pages(of documents: [DocumentID]? = nil) throws -> [PageRecord] {
        let sql = """
            SELECT id, document_id, number, source_path, state, attempts, tries, failure_code, failure_message FROM pages
            """
        let map: (Statement) -> PageRecord = { row in
            PageRecord(id: PageID(row.int64(0)), document: DocumentID(row.int64(1)), number: row.int(2),
                       source: RawPath(bytes: row.blob(3)), state: PageState(rawValue: row.text(4)) ?? .failed,
                       attempts: row.int(5), tries: row.int(6), failureCode: row.optionalText(7),
                       failureMessage: row.optionalText(8))
        }
        guard let documents else {
            return try connection.cached(sql + " ORDER BY document_id, number").rows([], map)
        }
        var result: [PageRecord] = []
        let statement = try connection.cached(sql + " WHERE document_id = ? ORDER BY number")
        for document in documents { result += try statement.rows([.integer(document.rawValue)], map) }
        return result
    }

    /// Documents that still have queued or leased pages.
    public func documentsWithWork() throws -> [DocumentID] {
        // `state != 'done'` lets the partial index `pages_unfinished` (schema 10) serve it; `pages_state` is gone (15).
        try connection.cached("""
            SELECT DISTINCT document_id FROM pages WHERE state != 'done' AND +state IN ('queued', 'leased') ORDER BY document_id
            """)
            .rows([]) { DocumentID($0.int64(0)) }
    }

    /// Page counts by state for the given documents.
    public func counts(of documents: [DocumentID]) throws -> [PageState: Int] {
        var counts: [PageState: Int] = [:]
        let statement = try connection.cached("SELECT state, count(*) FROM pages WHERE document_id = ? GROUP BY state")
        for document in documents {
            for (state, count) in try statement.rows([.integer(document.rawValue)], { ($0.text(0), $0.int(1)) }) {
                if let state = PageState(rawValue: state) { counts[state, default: 0] += count }
            }
        }
        return counts
    }

    /// The stored text of a done page.
    public func text(of page: PageID) throws -> String? {
        try connection.cached("SELECT text FROM results WHERE page_id = ?").first([.integer(page.rawValue)]) { $0.text(0) }
    }

    /// The stored structure of a done page (`PageResult.structureJSON`: blocks, language, keywords…); nil when the
    /// page has no result or the worker sent something that is not JSON.
    /// A result stored with a page model (`model(of:)`) has its structure's blocks in the model: they are put back
    /// (as `PageResult.structureJSON` writes them), so readers see one shape.
    public func structure(of page: PageID) throws -> JSON? {
        let bytes = try connection.cached("SELECT structure FROM results WHERE page_id = ?").first([.integer(page.rawValue)]) {
            $0.blob(0)
        }
        guard let structure = bytes.flatMap({ try? JSON.parse($0) }) else { return nil }
        guard structure["blocks"] == nil, let model = try model(of: page) else { return structure }
        return model.result.withBlocks(structure)
    }

    /// The renderings stored with a page's result, by name (pdf, hocr, alto, page, json).
    public func artifacts(of page: PageID) throws -> [String: [UInt8]] {
        let rows = try connection.cached("SELECT name, data FROM artifacts WHERE page_id = ?").rows([.integer(page.rawValue)]) {
            ($0.text(0), $0.blob(1))
        }
        return Dictionary(rows, uniquingKeysWith: { first, _ in first })
    }

    /// How many result rows exist for each page that has one (every count must be 1).
    public func resultCounts() throws -> (pages: Int, rows: Int) {
        try connection.cached("SELECT count(DISTINCT page_id), count(*) FROM results").first { ($0.int(0), $0.int(1)) } ?? (0, 0)
    }
}
