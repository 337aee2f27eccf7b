import FarmCore
import SQLite

/// What the document-done webhook's watcher reads: documents added since its last look.
extension Store {
    /// The highest document id given so far (0 for an empty store).
    public func newestDocumentID() throws -> DocumentID {
        DocumentID(try connection.cached("SELECT coalesce(max(id), 0) FROM documents").first([]) { $0.int64(0) } ?? 0)
    }

    /// Up to `limit` document ids above `id`, in id order.
    public func documentIDs(after id: DocumentID, limit: Int) throws -> [DocumentID] {
        try connection.cached("SELECT id FROM documents WHERE id > ? ORDER BY id LIMIT ?")
            .rows([.integer(id.rawValue), .integer(Int64(limit))]) { DocumentID($0.int64(0)) }
    }
}
