import SQLite

/// The statements the coordinator runs for every page, each kept by the store once prepared: the connection's own
/// cache finds a statement by its SQL text, hashing and comparing the whole text at every use (~0.3 µs a statement,
/// several a page; decision 0089, stop 39).
enum HotStatement: Int, CaseIterable {
    case lease, doneFromLeased, doneFromQueued, countChange, insertResult, attemptDone
}

extension Store {
    /// The statement `which`, compiled from `sql` at its first use. `sql` must be the same text at every call.
    func hot(_ which: HotStatement, _ sql: @autoclosure () -> String) throws -> Statement {
        if let statement = hotStatements[which.rawValue] {
            statement.reset()
            return statement
        }
        let statement = try connection.prepare(sql())
        hotStatements[which.rawValue] = statement
        return statement
    }
}
