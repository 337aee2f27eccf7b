import FarmCore
import FarmStore

/// Opening the store and choosing documents for the reading commands (`search`, `keywords`).
enum ReportDocuments {
    static let spec = OptionSpec("--document", value: "NAME", repeatable: true,
                                 "Only this document (its name as submitted, or the file name); may be repeated.")

    /// Opens the store for reading; a missing or foreign file ends the command with 66.
    static func open(_ path: String) throws -> Store {
        do {
            return try Store(path: path, readOnly: true)
        } catch let error as StoreError {
            throw CommandFailure(.noInput, error.message)
        }
    }

    /// The documents the `--document` options name (nil: all); a name no document has ends the command with 66.
    static func selected(_ names: [String], in store: Store) throws -> [DocumentRecord]? {
        guard !names.isEmpty else { return nil }
        var records: [DocumentRecord] = []
        for name in names {
            let found = try store.documents(named: name)
            guard !found.isEmpty else {
                throw CommandFailure(.noInput, "no document named '\(name)' in \(store.path) (ocrfarm keywords lists them)")
            }
            records += found.filter { record in !records.contains { $0.id == record.id } }
        }
        return records
    }
}
