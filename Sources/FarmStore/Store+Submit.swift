import FarmCore
import SQLite

/// A page to add: where its bytes are, and, for inputs already known to be unusable, why it failed.
public struct NewPage: Sendable {
    public var source: RawPath
    /// Page within the file (TIFF or PDF page), from 0.
    public var index: Int
    /// Image or PDF; invalid for a page that fails at once.
    public var kind: SourceKind
    public var failure: PageFailure?
    /// The source file as submitted: its SHA-256 (hex) and size, checked before the page is sent.
    public var sourceHash: String?
    public var sourceSize: Int?
    /// The page split out of a multi-page file, which dispatch sends instead of the whole file (`source` stays
    /// the file as submitted: export, IIIF and the viewer read it).
    public var part: PagePart?

    public init(source: RawPath, index: Int, kind: SourceKind, failure: PageFailure? = nil, sourceHash: String? = nil,
                sourceSize: Int? = nil, part: PagePart? = nil) {
        self.source = source
        self.index = index
        self.kind = kind
        self.failure = failure
        self.sourceHash = sourceHash
        self.sourceSize = sourceSize
        self.part = part
    }
}

/// A document to add: one submitted file, or a folder submitted as one document.
public struct NewDocument: Sendable {
    public var name: String
    public var source: RawPath
    public var contentHash: String?
    public var priority: Int
    public var options: PageOptions
    public var pages: [NewPage]

    public init(name: String, source: RawPath, contentHash: String?, priority: Int, options: PageOptions, pages: [NewPage]) {
        self.name = name
        self.source = source
        self.contentHash = contentHash
        self.priority = priority
        self.options = options
        self.pages = pages
    }
}

/// A document as stored.
public struct DocumentRecord: Sendable, Equatable {
    public let id: DocumentID
    public let name: String
    public let pageCount: Int
    public let submittedAt: Double
}

extension Store {
    /// The earliest document submitted with this content hash, if any.
    public func document(withHash hash: String) throws -> DocumentRecord? {
        try connection.cached("SELECT id, name, page_count, submitted_at FROM documents WHERE content_hash = ? ORDER BY id LIMIT 1")
            .first([.text(hash)]) { DocumentRecord(id: DocumentID($0.int64(0)), name: $0.text(1), pageCount: $0.int(2), submittedAt: $0.double(3)) }
    }

    /// The documents submitted from the file or folder at `source` (absolute), newest first, with their content
    /// hashes: how `submit` knows a file changed since it was submitted.
    public func documents(fromSource source: RawPath) throws -> [(record: DocumentRecord, hash: String?)] {
        try connection.cached("""
            SELECT id, name, page_count, submitted_at, content_hash FROM documents WHERE source = ? ORDER BY id DESC
            """).rows([.blob(source.bytes)]) {
            (DocumentRecord(id: DocumentID($0.int64(0)), name: $0.text(1), pageCount: $0.int(2), submittedAt: $0.double(3)),
             $0.optionalText(4))
        }
    }

    /// How a document's pages are to be read, as submitted.
    public func options(of document: DocumentID) throws -> PageOptions? {
        try connection.cached("SELECT options FROM documents WHERE id = ?").first([.integer(document.rawValue)]) {
            PageOptions(json: try? JSON.parse($0.text(0)))
        }
    }

    /// Adds documents and their pages in one transaction; returns their ids in order.
    @discardableResult
    public func add(_ documents: [NewDocument], now: Double = Clock.now) throws -> [DocumentID] {
        try write {
            let insertDocument = try connection.cached("""
                INSERT INTO documents (name, source, content_hash, priority, options, page_count, submitted_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """)
            let insertPage = try connection.cached("""
                INSERT INTO pages (document_id, number, source_path, source_index, source_kind, state, priority, updated_at,
                                   failure_stage, failure_code, failure_message, source_hash, source_size)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            var ids: [DocumentID] = []
            for document in documents {
                try insertDocument.execute([
                    .text(document.name), .blob(document.source.bytes), SQLiteValue(document.contentHash),
                    .integer(Int64(document.priority)), .text(document.options.json.rendered),
                    .integer(Int64(document.pages.count)), .real(now),
                ])
                let id = DocumentID(connection.lastInsertRowID)
                try connection.cached("INSERT INTO document_search (rowid, name) VALUES (?, ?)")
                    .execute([.integer(id.rawValue), .text(SearchText.nameIndexed(document.name))])
                for (number, page) in document.pages.enumerated() {
                    try insertPage.execute([
                        .integer(id.rawValue), .integer(Int64(number + 1)), .blob(page.source.bytes),
                        .integer(Int64(page.index)), .text(page.kind.rawValue),
                        .text(page.failure == nil ? PageState.queued.rawValue : PageState.failed.rawValue),
                        .integer(Int64(document.priority)), .real(now),
                        SQLiteValue(page.failure?.stage), SQLiteValue(page.failure?.code.rawValue),
                        SQLiteValue(page.failure?.message), SQLiteValue(page.sourceHash),
                        page.sourceSize.map { .integer(Int64($0)) } ?? .null,
                    ])
                    if let part = page.part { try insertPart(part, of: connection.lastInsertRowID) }
                }
                ids.append(id)
            }
            return ids
        }
    }
}
