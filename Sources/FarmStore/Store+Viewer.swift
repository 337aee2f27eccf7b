import FarmCore
import SQLite

/// A page's result as the viewer shows it (`/api/pages/{id}`): what the worker read, and when.
public struct ResultSummary: Sendable {
    public let engine: String
    public let text: String
    public let meanConfidence: Double
    public let width: Int
    public let height: Int
    /// The quality figure; nil when not measured (or the store is older than schema 6).
    public let quality: Double?
    /// The worker's structure (`structure(of:)`'s shape: blocks put back from the page model); nil when the stored
    /// structure is not JSON.
    public let structure: JSON?
    public let finishedAt: Double
}

/// What the web viewer and API read about documents and pages (FarmWeb's `API`).
extension Store {
    /// The quality column came with schema version 6; an older store's pages have none.
    var hasQuality: Bool { get throws { try connection.userVersion >= 6 } }

    /// Document `id`; nil when there is none.
    public func document(_ id: DocumentID) throws -> DocumentRecord? {
        try connection.cached("SELECT id, name, page_count, submitted_at FROM documents WHERE id = ?")
            .first([.integer(id.rawValue)]) {
                DocumentRecord(id: DocumentID($0.int64(0)), name: $0.text(1), pageCount: $0.int(2), submittedAt: $0.double(3))
            }
    }

    /// Page `id`; nil when there is none.
    public func page(_ id: PageID) throws -> PageRecord? {
        try connection.cached("""
            SELECT id, document_id, number, source_path, state, attempts, tries, failure_code, failure_message FROM pages
            WHERE id = ?
            """).first([.integer(id.rawValue)]) { row in
            PageRecord(id: PageID(row.int64(0)), document: DocumentID(row.int64(1)), number: row.int(2),
                       source: RawPath(bytes: row.blob(3)), state: PageState(rawValue: row.text(4)) ?? .failed,
                       attempts: row.int(5), tries: row.int(6), failureCode: row.optionalText(7),
                       failureMessage: row.optionalText(8))
        }
    }

    /// The page numbered `number` in `document` (a page's neighbours); nil when there is none.
    public func page(numbered number: Int, in document: DocumentID) throws -> PageID? {
        try connection.cached("SELECT id FROM pages WHERE document_id = ? AND number = ?")
            .first([.integer(document.rawValue), .integer(Int64(number))]) { PageID($0.int64(0)) }
    }

    /// A done page's quality and mean confidence (a page list's figures); nil without a result.
    public func measures(of page: PageID) throws -> (quality: Double?, meanConfidence: Double)? {
        try connection.cached(try hasQuality
            ? "SELECT quality, mean_confidence FROM results WHERE page_id = ?"
            : "SELECT NULL, mean_confidence FROM results WHERE page_id = ?")
            .first([.integer(page.rawValue)]) { ($0.optionalDouble(0), $0.double(1)) }
    }

    /// A done page's result; nil without one.
    public func resultSummary(of page: PageID) throws -> ResultSummary? {
        try connection.cached("""
            SELECT engine, text, mean_confidence, width, height, \(try hasQuality ? "quality" : "NULL"), structure, finished_at
            FROM results WHERE page_id = ?
            """).first([.integer(page.rawValue)]) { row in
            ResultSummary(
                engine: row.text(0), text: row.text(1), meanConfidence: row.double(2), width: row.int(3), height: row.int(4),
                quality: row.optionalDouble(5),
                structure: (try? JSON.parse(row.blob(6))).map { structure in
                    // A result with a page model keeps its blocks there (render on demand): put back.
                    structure["blocks"] == nil ? ((try? self.structure(of: page)) ?? nil) ?? structure : structure
                },
                finishedAt: row.double(7))
        }
    }

    /// Pages finished in each minute (minutes since 1970) of `minutes`, oldest first, minutes without any left out:
    /// from `result_minutes` (schema 10, results counted per minute of `finished_at` by triggers), so a day reads at
    /// most 1,440 small rows however many results it had; an older store counts them in the `finished_at` index.
    public func finishedPerMinute(_ minutes: ClosedRange<Int64>) throws -> [(minute: Int64, count: Int)] {
        if try connection.userVersion >= 10 {
            return try connection.cached("""
                SELECT minute, count FROM result_minutes WHERE minute >= ? AND minute <= ? AND count != 0 ORDER BY minute
                """).rows([.integer(minutes.lowerBound), .integer(minutes.upperBound)]) { ($0.int64(0), $0.int(1)) }
        }
        return try connection.cached("""
            SELECT CAST(finished_at / 60 AS INTEGER), count(*) FROM results
            WHERE finished_at >= ? AND finished_at < ? GROUP BY 1 ORDER BY 1
            """).rows([.real(Double(minutes.lowerBound) * 60), .real(Double(minutes.upperBound + 1) * 60)]) {
            ($0.int64(0), $0.int(1))
        }
    }
}
