import FarmCore
import SQLite

/// One page of a multi-page file, split out at submit into a file of its own (a one-page PDF, a TIFF frame as G4
/// or PNG), so a JOB carries that page alone and not the whole file (issue 37, decision 0084). The page keeps its
/// source as submitted (the whole file and the page within it): export, IIIF and the viewer read that; only
/// dispatch reads the part.
public struct PagePart: Sendable, Equatable {
    /// Absolute path of the part, in the store's page folder (`STORE.pages/HASH/`).
    public let path: RawPath
    /// SHA-256 (hex) and size of the part as it was written: dispatch sends it only if it still is.
    public let sha256: String
    public let size: Int

    public init(path: RawPath, sha256: String, size: Int) {
        self.path = path
        self.sha256 = sha256
        self.size = size
    }
}

extension Store {
    /// Schema 13: the parts of multi-page files, one row per page that has one. A page without a row (submitted
    /// before, or its part gone since it was done) is sent as its whole source file, checked as before.
    static let partsMigration = Migration(version: 13, name: "page parts", sql: """
        CREATE TABLE page_parts (
            page_id INTEGER PRIMARY KEY,
            path BLOB NOT NULL,
            sha256 TEXT NOT NULL,
            size INTEGER NOT NULL
        ) STRICT;
        """)

    func hasPageParts() throws -> Bool { try connection.userVersion >= 13 }

    /// Records the part of `page` (inside `add`'s transaction).
    func insertPart(_ part: PagePart, of page: Int64) throws {
        try connection.cached("INSERT OR REPLACE INTO page_parts (page_id, path, sha256, size) VALUES (?, ?, ?, ?)")
            .execute([.integer(page), .blob(part.path.bytes), .text(part.sha256), .integer(Int64(part.size))])
    }

    /// The part dispatch sends for `page`, if it has one.
    public func part(of page: PageID) throws -> PagePart? {
        try connection.cached("SELECT path, sha256, size FROM page_parts WHERE page_id = ?").first([.integer(page.rawValue)]) {
            PagePart(path: RawPath(bytes: $0.blob(0)), sha256: $0.text(1), size: $0.int(2))
        }
    }

    /// Forgets the part of a page that is done (in the caller's transaction) and returns its path, for the caller
    /// to remove once the transaction is committed. A page read again later is sent as its whole source file.
    public func dropPart(of page: PageID) throws -> RawPath? {
        try connection.cached("DELETE FROM page_parts WHERE page_id = ? RETURNING path").first([.integer(page.rawValue)]) {
            RawPath(bytes: $0.blob(0))
        }
    }

    /// Forgets the parts of pages that are done and returns their paths, for the caller to remove once this write
    /// is committed: the parts a coordinator leaves when a page is done by a result it did not send the part for
    /// (a restarted coordinator, a page taken back; see `Coordinator.removeStrayParts`).
    public func dropDoneParts() throws -> [RawPath] {
        guard try hasPageParts() else { return [] }
        return try write {
            try connection.cached("""
                DELETE FROM page_parts WHERE page_id IN (SELECT id FROM pages WHERE state = 'done') RETURNING path
                """).rows([]) { RawPath(bytes: $0.blob(0)) }
        }
    }

    /// Every file in a page folder (`STORE.pages/`) that a row names: the parts, and any page whose source is kept
    /// there. A file in the page folder that none of these names belongs to no page, or to a submit not yet
    /// committed (`Coordinator.removeStrayParts`). Reads every part row and every page's source: for a coordinator's
    /// start, not for a hot path.
    public func pathsInPageFolders() throws -> [RawPath] {
        let parts = try hasPageParts()
            ? try connection.cached("SELECT path FROM page_parts").rows([]) { RawPath(bytes: $0.blob(0)) } : []
        let sources = try connection.cached("SELECT DISTINCT source_path FROM pages WHERE instr(source_path, ?) > 0")
            .rows([.blob(Array(".pages/".utf8))]) { RawPath(bytes: $0.blob(0)) }
        return parts + sources
    }

    /// The folders holding the parts of `document`'s pages (each folder belongs to one submission of one file).
    func partFolders(of document: DocumentID) throws -> Set<RawPath> {
        guard try hasPageParts() else { return [] }
        return Set(try connection.cached("""
            SELECT pp.path FROM page_parts pp JOIN pages p ON p.id = pp.page_id WHERE p.document_id = ?
            """).rows([.integer(document.rawValue)]) { RawPath(bytes: $0.blob(0)).parent })
    }

    func deleteParts(of document: DocumentID) throws {
        guard try hasPageParts() else { return }
        try connection.cached("DELETE FROM page_parts WHERE page_id IN (SELECT id FROM pages WHERE document_id = ?)")
            .execute([.integer(document.rawValue)])
    }
}
