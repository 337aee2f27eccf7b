import FarmCore
import SQLite

/// A document as the document list shows it: its pages by state (as stored: a page being reread counts as
/// queued or leased) and the quality of its results.
public struct DocumentSummary: Sendable, Equatable {
    public let document: DocumentRecord
    public let pages: PageCounts
    /// Results with a quality figure.
    public let qualityMeasured: Int
    /// Their mean and lowest figure; nil when none is measured.
    public let qualityMean: Double?
    public let qualityMin: Double?
}

extension Store {
    /// Whether the store keeps per-document counts (`document_counts`, schema 12).
    func hasDocumentCounts() throws -> Bool { try connection.userVersion >= 12 }

    /// Up to `limit` documents after `id` in id order, with their pages by state and quality: one row each from
    /// `document_counts` (schema 12, kept by triggers), else counted from their pages and results.
    public func documentSummaries(after id: DocumentID?, limit: Int) throws -> [DocumentSummary] {
        guard try hasDocumentCounts() else {
            return try documents(after: id, limit: limit).map { try countedSummary(of: $0) }
        }
        return try connection.cached("""
            SELECT d.id, d.name, d.page_count, d.submitted_at, c.queued, c.leased, c.done, c.failed, c.quality_count,
                   c.quality_sum, c.quality_min
            FROM documents d LEFT JOIN document_counts c ON c.document_id = d.id WHERE d.id > ? ORDER BY d.id LIMIT ?
            """).rows([.integer(id?.rawValue ?? Int64.min), .integer(Int64(limit))]) { row in
            var pages = PageCounts()
            (pages.queued, pages.leased, pages.done, pages.failed) = (row.int(4), row.int(5), row.int(6), row.int(7))
            let measured = row.int(8)
            return DocumentSummary(
                document: DocumentRecord(id: DocumentID(row.int64(0)), name: row.text(1), pageCount: row.int(2),
                                         submittedAt: row.double(3)),
                pages: pages, qualityMeasured: measured,
                qualityMean: measured > 0 ? Double(row.int64(9)) / 1_000_000 / Double(measured) : nil,
                qualityMin: measured > 0 ? row.optionalDouble(10) : nil)
        }
    }

    /// `document`'s summary counted from its pages and results (every page's index entry, every result's
    /// structure): what `documentSummaries` read before schema 12, and what its counts must equal.
    public func countedSummary(of document: DocumentRecord) throws -> DocumentSummary {
        var pages = PageCounts()
        for (state, count) in try connection.cached("SELECT state, count(*) FROM pages WHERE document_id = ? GROUP BY state")
            .rows([.integer(document.id.rawValue)], { ($0.text(0), $0.int(1)) })
        {
            if let state = PageState(rawValue: state) { pages[state] = count }
        }
        // The quality column came with schema 6; an older store's results have none.
        let quality = try connection.cached(try connection.userVersion >= 6 ? """
            SELECT avg(r.quality), count(r.quality), min(r.quality) FROM pages p JOIN results r ON r.page_id = p.id
            WHERE p.document_id = ?
            """ : "SELECT NULL, 0, NULL WHERE ? IS NOT NULL")
        let measured = try quality.first([.integer(document.id.rawValue)]) { row in
            (row.optionalDouble(0), row.int(1), row.optionalDouble(2))
        }
        return DocumentSummary(document: document, pages: pages, qualityMeasured: measured?.1 ?? 0,
                               qualityMean: measured?.0, qualityMin: measured?.2)
    }
}
