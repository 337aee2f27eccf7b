import FarmCore
import SQLite

/// Queries for `ocrfarm export`: the store is walked in batches (documents by id, pages by number) and each page's
/// renderings are fetched one at a time, so an export of a million pages never holds them all in memory.
extension Store {
    /// How many documents the store holds.
    public func documentCount() throws -> Int {
        try connection.cached("SELECT count(*) FROM documents").first { $0.int(0) } ?? 0
    }

    /// Up to `limit` documents with an id above `id` (all from the start when nil), in id order.
    public func documents(after id: DocumentID?, limit: Int) throws -> [DocumentRecord] {
        try connection.cached("SELECT id, name, page_count, submitted_at FROM documents WHERE id > ? ORDER BY id LIMIT ?")
            .rows([.integer(id?.rawValue ?? Int64.min), .integer(Int64(limit))]) {
                DocumentRecord(id: DocumentID($0.int64(0)), name: $0.text(1), pageCount: $0.int(2), submittedAt: $0.double(3))
            }
    }

    /// Up to `limit` pages of `document` numbered above `number`, in page order.
    public func pages(of document: DocumentID, after number: Int, limit: Int) throws -> [PageRecord] {
        try connection.cached("""
            SELECT id, document_id, number, source_path, state, attempts, tries, failure_code, failure_message FROM pages
            WHERE document_id = ? AND number > ? ORDER BY number LIMIT ?
            """).rows([.integer(document.rawValue), .integer(Int64(number)), .integer(Int64(limit))]) { row in
            PageRecord(id: PageID(row.int64(0)), document: DocumentID(row.int64(1)), number: row.int(2),
                       source: RawPath(bytes: row.blob(3)), state: PageState(rawValue: row.text(4)) ?? .failed,
                       attempts: row.int(5), tries: row.int(6), failureCode: row.optionalText(7),
                       failureMessage: row.optionalText(8))
        }
    }

    /// Where a page comes from, as submitted: for an export to show a page that failed for good as its image.
    public func source(of page: PageID) throws -> SourceRef? {
        try connection.cached("SELECT source_path, source_index, source_kind, source_hash, source_size FROM pages WHERE id = ?")
            .first([.integer(page.rawValue)]) { row in
                SourceRef(path: RawPath(bytes: row.blob(0)), index: row.int(1), kind: SourceKind(rawValue: row.text(2)) ?? .image,
                           hash: row.optionalText(3), size: row.optionalInt(4))
            }
    }

    /// One rendering stored with a page's result (pdf, hocr, alto, page, json); nil when the page has none by that name.
    public func artifact(_ name: String, of page: PageID) throws -> [UInt8]? {
        try connection.cached("SELECT data FROM artifacts WHERE page_id = ? AND name = ?")
            .first([.integer(page.rawValue), .text(name)]) { $0.blob(0) }
    }
}
