import FarmCore
import SQLite

/// Documents' catalogue fields (`DocumentMetadata`, schema 14): read by the viewer and export, written by admins
/// through the web API, searched with the document's name.
extension Store {
    /// The metadata table came with schema version 14; an older store's documents have none.
    func hasMetadata() throws -> Bool { try connection.userVersion >= 14 }

    /// The fields of `document`: all empty when none were set (or the store is older than schema 14).
    public func metadata(of document: DocumentID) throws -> DocumentMetadata {
        guard try hasMetadata() else { return DocumentMetadata() }
        return try connection.cached("""
            SELECT title, date, creator, identifier, shelfmark FROM document_metadata WHERE document_id = ?
            """).first([.integer(document.rawValue)]) { row in
            DocumentMetadata(title: row.text(0), date: row.text(1), creator: row.text(2), identifier: row.text(3),
                             shelfmark: row.text(4))
        } ?? DocumentMetadata()
    }

    /// Sets the fields of `document` to `metadata` (each one checked: `DocumentMetadata.checked`), and indexes them
    /// for search with its name, in one transaction. Returns the fields as stored (trimmed); nil when there is no
    /// such document. Throws `MetadataError` for a value refused, before anything is written.
    @discardableResult
    public func setMetadata(_ metadata: DocumentMetadata, of document: DocumentID, now: Double = Clock.now) throws -> DocumentMetadata? {
        var stored = DocumentMetadata()
        for field in DocumentMetadata.Field.allCases {
            switch DocumentMetadata.checked(metadata[field], for: field) {
            case .success(let value): stored[field] = value
            case .failure(let error): throw error
            }
        }
        return try write {
            guard let record = try self.document(document) else { return nil }
            let id = SQLiteValue.integer(document.rawValue)
            if stored.isEmpty {
                try connection.cached("DELETE FROM document_metadata WHERE document_id = ?").execute([id])
            } else {
                try connection.cached("""
                    INSERT INTO document_metadata (document_id, title, date, creator, identifier, shelfmark, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (document_id) DO UPDATE SET title = excluded.title, date = excluded.date,
                        creator = excluded.creator, identifier = excluded.identifier, shelfmark = excluded.shelfmark,
                        updated_at = excluded.updated_at
                    """).execute([id] + DocumentMetadata.Field.allCases.map { .text(stored[$0]) } + [.real(now)])
            }
            try indexName(of: document, name: record.name, metadata: stored)
            return stored
        }
    }

    /// Puts `document`'s row in the name index: its name, then its metadata fields, so a search for a shelfmark
    /// or a creator finds the document as its name does (`documents(matchingName:)`).
    func indexName(of document: DocumentID, name: String, metadata: DocumentMetadata) throws {
        let id = SQLiteValue.integer(document.rawValue)
        let text = ([name] + DocumentMetadata.Field.allCases.map { metadata[$0] }.filter { !$0.isEmpty })
            .map(SearchText.nameIndexed).joined(separator: "\n")
        try connection.cached("DELETE FROM document_search WHERE rowid = ?").execute([id])
        try connection.cached("INSERT INTO document_search (rowid, name) VALUES (?, ?)").execute([id, .text(text)])
    }

    /// Removes the fields of `document` (with the document: `delete`).
    func deleteMetadata(of document: DocumentID) throws {
        guard try hasMetadata() else { return }
        try connection.cached("DELETE FROM document_metadata WHERE document_id = ?").execute([.integer(document.rawValue)])
    }
}
