import FarmCore
import SQLite

/// A done page's quality figure as stored (`PageQuality`), for `review`.
public struct PageQualityRecord: Sendable, Equatable {
    public let page: PageID
    public let document: DocumentRecord
    public let number: Int
    public let quality: PageQuality
    /// Why the page may read as garbage: its script has no installed language (issue 36).
    public var missingLanguage: MissingLanguageNote? = nil
}

/// A page in a script no installed language reads, as its stored structure records it (`PageResult.missingLanguageKey`).
public struct MissingLanguageNote: Sendable, Equatable, Hashable {
    public let script: String
    /// The Debian package that would read it (tesseract-ocr-rus).
    public let package: String
    /// The languages it was read with instead.
    public let readWith: String

    init?(json: JSON?) {
        guard let json, let script = json["script"]?.stringValue, let package = json["package"]?.stringValue else { return nil }
        self.script = script
        self.package = package
        self.readWith = json["read_with"]?.stringValue ?? ""
    }
}

/// A document's pages' figures: their mean and the weakest.
public struct DocumentQuality: Sendable, Equatable {
    public let document: DocumentRecord
    /// Done pages with a figure.
    public let measured: Int
    public let mean: Double
    public let weakest: Double
    public let weakestPage: Int
}

/// The review list: the weakest pages and documents, and how many done pages have a figure.
public struct QualityReview: Sendable, Equatable {
    public let pages: [PageQualityRecord]
    public let documents: [DocumentQuality]
    public let measured: Int
    /// Done pages without a figure (stored before quality was measured, or read by the `none` engine).
    public let unmeasured: Int
}

extension Store {
    /// The page figure in SQL: the `quality` column (schema 6), or, in a store not yet migrated (opened read-only
    /// by a newer ocrfarm), the same expression over the structure.
    private var qualityColumn: String {
        get throws {
            try connection.userVersion >= 6 ? "r.quality"
                : "(CASE WHEN json_valid(CAST(r.structure AS TEXT)) THEN json_extract(CAST(r.structure AS TEXT), '$.quality.figure') END)"
        }
    }

    /// The weakest pages (figure below `below`, when given), lowest first, at most `limit` (nil: all), and the
    /// documents by their pages' mean figure (below `below`, when given), lowest first, at most `limit`.
    public func qualityReview(below: Double? = nil, limit: Int? = nil, documents ids: [DocumentID]? = nil) throws -> QualityReview {
        let quality = try qualityColumn
        let idList = ids.map { " AND p.document_id IN (" + $0.map { String($0.rawValue) }.joined(separator: ",") + ")" } ?? ""
        let filter = below.map { " AND \(quality) < \($0)" } ?? ""
        let limitClause = limit.map { " LIMIT \($0)" } ?? ""
        // Only the listed pages' quality objects are taken out of their structures (the index gives the order).
        let pages = try connection.prepare("""
            SELECT p.id, p.number, d.id, d.name, d.page_count, d.submitted_at,
                   json_extract(CAST(r.structure AS TEXT), '$.quality'),
                   json_extract(CAST(r.structure AS TEXT), '$.\(PageResult.missingLanguageKey)')
            FROM results r JOIN pages p ON p.id = r.page_id JOIN documents d ON d.id = p.document_id
            WHERE \(quality) IS NOT NULL AND p.state = 'done'\(idList)\(filter)
            ORDER BY \(quality), p.id\(limitClause)
            """).rows { row -> PageQualityRecord? in
            guard let text = row.optionalText(6), let json = try? JSON.parse(text), let figure = PageQuality(json: json) else { return nil }
            return PageQualityRecord(page: PageID(row.int64(0)), document: DocumentRecord(
                id: DocumentID(row.int64(2)), name: row.text(3), pageCount: row.int(4), submittedAt: row.double(5)),
                number: row.int(1), quality: figure,
                missingLanguage: MissingLanguageNote(json: row.optionalText(7).flatMap { try? JSON.parse($0) }))
        }.compactMap { $0 }
        let documentFilter = below.map { " HAVING AVG(\(quality)) < \($0)" } ?? ""
        let documents = try connection.prepare("""
            SELECT d.id, d.name, d.page_count, d.submitted_at, COUNT(\(quality)), AVG(\(quality)), MIN(\(quality)),
                   (SELECT p2.number FROM pages p2 JOIN results r ON r.page_id = p2.id
                    WHERE p2.document_id = d.id AND \(quality) IS NOT NULL ORDER BY \(quality), p2.number LIMIT 1)
            FROM results r JOIN pages p ON p.id = r.page_id JOIN documents d ON d.id = p.document_id
            WHERE \(quality) IS NOT NULL AND p.state = 'done'\(idList)
            GROUP BY d.id\(documentFilter)
            ORDER BY AVG(\(quality)), d.id\(limitClause)
            """).rows { row in
            DocumentQuality(document: DocumentRecord(id: DocumentID(row.int64(0)), name: row.text(1), pageCount: row.int(2),
                                                     submittedAt: row.double(3)),
                            measured: row.int(4), mean: row.double(5), weakest: row.double(6), weakestPage: row.int(7))
        }
        let counts = try connection.prepare("""
            SELECT COUNT(\(quality)), COUNT(*) - COUNT(\(quality))
            FROM results r JOIN pages p ON p.id = r.page_id WHERE p.state = 'done'\(idList)
            """).first { ($0.int(0), $0.int(1)) } ?? (0, 0)
        return QualityReview(pages: pages, documents: documents, measured: counts.0, unmeasured: counts.1)
    }

    /// How many done pages have a figure below `below` (of `ids`' documents, when given), counted by SQLite.
    public func qualityCount(below: Double, documents ids: [DocumentID]? = nil) throws -> Int {
        let quality = try qualityColumn
        let idList = ids.map { " AND p.document_id IN (" + $0.map { String($0.rawValue) }.joined(separator: ",") + ")" } ?? ""
        return try connection.prepare("""
            SELECT COUNT(*) FROM results r JOIN pages p ON p.id = r.page_id
            WHERE p.state = 'done' AND \(quality) < \(below)\(idList)
            """).first { $0.int(0) } ?? 0
    }

    /// The done pages (of `ids`' documents, when given) in a script no installed language read, counted by script
    /// and package, most pages first: `run`'s summary names the packages.
    public func missingLanguages(documents ids: [DocumentID]? = nil) throws -> [(note: MissingLanguageNote, pages: Int)] {
        let idList = ids.map { " AND p.document_id IN (" + $0.map { String($0.rawValue) }.joined(separator: ",") + ")" } ?? ""
        let structure = "CAST(r.structure AS TEXT)"
        return try connection.prepare("""
            SELECT json_extract(\(structure), '$.\(PageResult.missingLanguageKey)'), COUNT(*)
            FROM results r JOIN pages p ON p.id = r.page_id
            WHERE p.state = 'done' AND json_valid(\(structure))
              AND json_extract(\(structure), '$.\(PageResult.missingLanguageKey).package') IS NOT NULL\(idList)
            GROUP BY json_extract(\(structure), '$.\(PageResult.missingLanguageKey).script'),
                     json_extract(\(structure), '$.\(PageResult.missingLanguageKey).package'),
                     json_extract(\(structure), '$.\(PageResult.missingLanguageKey).read_with')
            ORDER BY COUNT(*) DESC
            """).rows { row -> (note: MissingLanguageNote, pages: Int)? in
            guard let note = MissingLanguageNote(json: row.optionalText(0).flatMap { try? JSON.parse($0) }) else { return nil }
            return (note, row.int(1))
        }.compactMap { $0 }
    }
}
