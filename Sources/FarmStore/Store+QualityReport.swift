import FarmCore
import SQLite

/// One document's line of `export --quality-report`.
public struct DocumentQualityLine: Sendable, Equatable {
    public let document: DocumentRecord
    public let pages: Int
    public let done: Int
    public let failed: Int
    /// Mean figure of its done pages that have one; nil when none has.
    public let mean: Double?
    /// Its done page with the lowest figure (page number in the document) and that figure.
    public let worstPage: Int?
    public let worstPageQuality: Double?
    /// The lowest worst-block figure among its pages (`PageQuality.worstBlock`), and the page it is on.
    public let worstRegion: Double?
    public let worstRegionPage: Int?
}

extension Store {
    /// Every document (of `ids`, when given) with its page counts and quality: the weakest first (lowest mean
    /// figure), documents without any measured page last, then by id.
    public func qualityLines(documents ids: [DocumentID]? = nil) throws -> [DocumentQualityLine] {
        let idList = ids.map { " WHERE d.id IN (" + $0.map { String($0.rawValue) }.joined(separator: ",") + ")" } ?? ""
        // The figures are read from the structure, as schema 6's column is, so a store of any version answers.
        let structure = "CAST(r.structure AS TEXT)"
        let figure = "(CASE WHEN json_valid(\(structure)) THEN json_extract(\(structure), '$.quality.figure') END)"
        let block = "(CASE WHEN json_valid(\(structure)) THEN json_extract(\(structure), '$.quality.worst_block.figure') END)"
        let lines = try connection.prepare("""
            SELECT d.id, d.name, d.page_count, d.submitted_at,
                   COUNT(p.id), SUM(p.state = 'done'), SUM(p.state = 'failed'),
                   AVG(CASE WHEN p.state = 'done' THEN \(figure) END),
                   (SELECT p2.number FROM pages p2 JOIN results r ON r.page_id = p2.id
                    WHERE p2.document_id = d.id AND p2.state = 'done' AND \(figure) IS NOT NULL ORDER BY \(figure), p2.number LIMIT 1),
                   (SELECT MIN(\(figure)) FROM pages p2 JOIN results r ON r.page_id = p2.id
                    WHERE p2.document_id = d.id AND p2.state = 'done'),
                   (SELECT p2.number FROM pages p2 JOIN results r ON r.page_id = p2.id
                    WHERE p2.document_id = d.id AND p2.state = 'done' AND \(block) IS NOT NULL ORDER BY \(block), p2.number LIMIT 1),
                   (SELECT MIN(\(block)) FROM pages p2 JOIN results r ON r.page_id = p2.id
                    WHERE p2.document_id = d.id AND p2.state = 'done')
            FROM documents d LEFT JOIN pages p ON p.document_id = d.id LEFT JOIN results r ON r.page_id = p.id\(idList)
            GROUP BY d.id
            """).rows { row in
            DocumentQualityLine(
                document: DocumentRecord(id: DocumentID(row.int64(0)), name: row.text(1), pageCount: row.int(2), submittedAt: row.double(3)),
                pages: row.int(4), done: row.optionalInt(5) ?? 0, failed: row.optionalInt(6) ?? 0, mean: row.optionalDouble(7),
                worstPage: row.optionalInt(8), worstPageQuality: row.optionalDouble(9),
                worstRegion: row.optionalDouble(11), worstRegionPage: row.optionalInt(10))
        }
        return lines.sorted { a, b in
            switch (a.mean, b.mean) {
            case let (x?, y?) where x != y: return x < y
            case (_?, nil): return true
            case (nil, _?): return false
            default: return a.document.id.rawValue < b.document.id.rawValue
            }
        }
    }
}
