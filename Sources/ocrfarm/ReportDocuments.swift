import FarmCore
import FarmStore

/// Opening the store and choosing documents for the reading commands (`status`, `requeue`, `search`, `keywords`,
/// `export`, `backup`).
enum ReportDocuments {
    static let spec = OptionSpec("--document", value: "NAME", repeatable: true,
                                 "Only this document (its name as submitted, or the file name); may be repeated.")

    /// Opens the store for reading; a missing or foreign file ends the command with 66, a full disk (SQLite
    /// cannot set up its shared memory beside the store) with 74, a damaged one with 76.
    static func open(_ path: String) throws -> Store {
        do {
            return try Store(path: path, readOnly: true)
        } catch let error as StoreError {
            throw CommandFailure(error.isDiskFull ? .ioError : error.isDamaged ? .damagedStore : .noInput, error.message)
        }
    }

    /// The documents with this name, or exit 66 with the names that come close.
    static func named(_ name: String, in store: Store) throws -> [DocumentRecord] {
        let found = try store.documents(named: name)
        guard found.isEmpty else { return found }
        let similar = try store.documentNames(containing: name)
        let hint = similar.isEmpty ? "" : "; names containing it: " + similar.map { "'\(Printable.text($0))'" }.joined(separator: ", ")
        throw CommandFailure(.noInput, "no document named '\(Printable.text(name))' in \(store.path)\(hint)")
    }

    /// The documents the `--document` options name (nil: all); a name no document has ends the command with 66.
    static func selected(_ names: [String], in store: Store) throws -> [DocumentRecord]? {
        guard !names.isEmpty else { return nil }
        var records: [DocumentRecord] = []
        for name in names {
            records += try named(name, in: store).filter { record in !records.contains { $0.id == record.id } }
        }
        return records
    }
}
