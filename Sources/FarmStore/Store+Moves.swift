import FarmCore
import SQLite

/// A source file that moved: `watch --done-to` moves a finished file, and the store follows it (issue 36).
extension Store {
    /// The content hash and size recorded at submit for the file at `path` as a source of `document`'s pages;
    /// nil when none of its pages comes from that path.
    public func recordedContent(of document: DocumentID, path: RawPath) throws -> (hash: String?, size: Int?)? {
        try connection.cached("""
            SELECT source_hash, source_size FROM pages WHERE document_id = ? AND source_path = ? LIMIT 1
            """).first([.integer(document.rawValue), .blob(path.bytes)]) { ($0.optionalText(0), $0.optionalInt(1)) }
    }

    /// Records that `document`'s file at `old` is now at `new`: its pages' source paths and the document's source,
    /// in one transaction. The recorded hashes and sizes stay, so whoever reads the file there still checks it.
    /// Returns how many pages now name `new`.
    @discardableResult
    public func recordMove(of document: DocumentID, from old: RawPath, to new: RawPath) throws -> Int {
        try write {
            try connection.cached("UPDATE pages SET source_path = ? WHERE document_id = ? AND source_path = ?")
                .execute([.blob(new.bytes), .integer(document.rawValue), .blob(old.bytes)])
            let pages = connection.changes
            try connection.cached("UPDATE documents SET source = ? WHERE id = ? AND source = ?")
                .execute([.blob(new.bytes), .integer(document.rawValue), .blob(old.bytes)])
            return pages
        }
    }

    /// The documents, other than `except`, whose pages are read from the file at `path`.
    public func documents(readingFrom path: RawPath, except: DocumentID) throws -> [DocumentID] {
        try connection.cached("SELECT DISTINCT document_id FROM pages WHERE source_path = ? AND document_id != ? ORDER BY 1")
            .rows([.blob(path.bytes), .integer(except.rawValue)]) { DocumentID($0.int64(0)) }
    }
}
