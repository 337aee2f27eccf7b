import FarmCore
import SQLite

/// What deleting documents removed (or, with a dry run, would remove).
public struct DeleteReport: Sendable, Equatable {
    public var documents = 0
    public var pages = 0
    /// Pages that had a result (text, renderings and search entry).
    public var results = 0
    /// Page files `submit` split out of multi-page files, in the store's `.pages` folder, that no other page
    /// uses, and the folders of the documents' page parts (each of one submission): removed from disk, folders with
    /// what is in them, after the transaction.
    public var splitFiles: [RawPath] = []

    public init() {}
}

/// Why documents cannot be deleted now.
public struct DeleteRefusal: Error, Sendable, CustomStringConvertible {
    /// Pages of the documents that a worker is reading.
    public let leased: Int
    public var description: String {
        "\(leased) page\(leased == 1 ? " is" : "s are") being read by a worker; wait until \(leased == 1 ? "it is" : "they are") "
            + "done, or stop the coordinator, and delete again"
    }
}

extension Store {
    /// Removes `documents` with their pages, attempts, results, renderings and search entries, in one
    /// transaction (all or nothing). Refused while a worker holds a lease on one of their pages: its result would
    /// arrive for a page that is gone. With `dryRun`, counts and changes nothing.
    public func delete(_ documents: [DocumentID], dryRun: Bool = false) throws -> DeleteReport {
        try write {
            var report = DeleteReport()
            var leased = 0
            var splitCandidates: Set<RawPath> = []
            var partFolderSet: Set<RawPath> = []
            // Split pages are stored by absolute path (`submit` makes them so).
            let folder = RawPath(path + ".pages/")
            let splitFolder = RawPath.currentDirectory.map { folder.absolute(in: $0) } ?? folder
            for document in documents {
                guard try connection.cached("SELECT 1 FROM documents WHERE id = ?").rows([.integer(document.rawValue)], { _ in true })
                    .first == true else { continue }
                let counts = try connection.cached("""
                    SELECT count(*), count(r.page_id), coalesce(sum(p.state = 'leased'), 0)
                    FROM pages p LEFT JOIN results r ON r.page_id = p.id WHERE p.document_id = ?
                    """).rows([.integer(document.rawValue)]) { ($0.int(0), $0.int(1), $0.int(2)) }.first ?? (0, 0, 0)
                report.documents += 1
                report.pages += counts.0
                report.results += counts.1
                leased += counts.2
                for source in try connection.cached("SELECT DISTINCT source_path FROM pages WHERE document_id = ?")
                    .rows([.integer(document.rawValue)], { RawPath(bytes: $0.blob(0)) })
                where source.bytes.starts(with: splitFolder.bytes) {
                    splitCandidates.insert(source)
                }
                partFolderSet.formUnion(try partFolders(of: document))
            }
            if leased > 0 { throw DeleteRefusal(leased: leased) }
            // Only folders inside the page folder, so a row written by hand cannot make delete remove another folder.
            let partFolderList = partFolderSet.sorted().filter { $0.bytes.starts(with: splitFolder.bytes) && $0 != splitFolder }
            guard !dryRun else {
                report.splitFiles = splitCandidates.sorted() + partFolderList
                return report
            }
            for document in documents {
                let id = SQLiteValue.integer(document.rawValue)
                // Its counts go first: deleting its results then looks for no new lowest quality (schema 12).
                if try hasDocumentCounts() {
                    try connection.cached("DELETE FROM document_counts WHERE document_id = ?").execute([id])
                }
                for table in ["page_search WHERE rowid", "artifacts WHERE page_id", "results WHERE page_id", "attempts WHERE page_id",
                              "result_history WHERE page_id"] {
                    try connection.cached("DELETE FROM \(table) IN (SELECT id FROM pages WHERE document_id = ?)").execute([id])
                }
                try deleteParts(of: document)
                try connection.cached("DELETE FROM pages WHERE document_id = ?").execute([id])
                try connection.cached("DELETE FROM document_search WHERE rowid = ?").execute([id])
                try deleteMetadata(of: document)
                try connection.cached("DELETE FROM documents WHERE id = ?").execute([id])
            }
            // A split page file goes only when no page left in the store reads it (the same content submitted
            // again with --force shares the folder).
            for source in splitCandidates.sorted() {
                let used = try connection.cached("SELECT 1 FROM pages WHERE source_path = ? LIMIT 1")
                    .rows([.blob(source.bytes)], { _ in true }).first ?? false
                if !used { report.splitFiles.append(source) }
            }
            report.splitFiles += partFolderList
            return report
        }
    }
}
