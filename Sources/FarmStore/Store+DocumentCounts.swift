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

/// Pages of one document that changed state in a transaction, by state (`Store.countChanges`).
struct CountChange {
    var queued = 0
    var leased = 0
    var done = 0
    var failed = 0

    mutating func add(_ step: Int, to state: PageState) {
        switch state {
        case .queued: queued += step
        case .leased: leased += step
        case .done: done += step
        case .failed: failed += step
        }
    }
}

extension Store {
    /// Notes that a page of `document` went from `old` to `new`: one of the two changes the trigger
    /// `pages_count_update` leaves out since schema 15 (a lease, a result). Inside a `write` it is added to
    /// `document_counts` at its end, with the document's other pages (one UPDATE a document, not one a page); in
    /// any other transaction at once. A caller outside any transaction runs its change and this in a `write`.
    func countChange(of document: Int64, from old: PageState, to new: PageState) throws {
        var change = countChanges[document] ?? CountChange()
        change.add(-1, to: old)
        change.add(1, to: new)
        if writing {
            countChanges[document] = change
        } else {
            try writeCountChange(change, of: document)
        }
    }

    /// Adds the open `write`'s count changes to `document_counts`, before its COMMIT.
    func writeCountChanges() throws {
        for (document, change) in countChanges { try writeCountChange(change, of: document) }
        countChanges.removeAll(keepingCapacity: true)
    }

    private func writeCountChange(_ change: CountChange, of document: Int64) throws {
        try hot(.countChange, """
            UPDATE document_counts SET queued = queued + ?, leased = leased + ?, done = done + ?, failed = failed + ?
            WHERE document_id = ?
            """).execute([.integer(Int64(change.queued)), .integer(Int64(change.leased)), .integer(Int64(change.done)),
                          .integer(Int64(change.failed)), .integer(document)])
    }

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
