import CSQLite

/// `SQLITE_TRANSIENT` is a function-pointer cast that Swift does not import: SQLite copies the bound bytes.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A value to bind to a statement parameter.
public enum SQLiteValue: Sendable, Equatable {
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
    case null
}

extension SQLiteValue: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral, ExpressibleByFloatLiteral,
    ExpressibleByNilLiteral
{
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(stringLiteral value: String) { self = .text(value) }
    public init(floatLiteral value: Double) { self = .real(value) }
    public init(nilLiteral: ()) { self = .null }
}

extension SQLiteValue {
    public init(_ value: Int) { self = .integer(Int64(value)) }
    public init(_ value: String?) { self = value.map { .text($0) } ?? .null }
    public init(_ value: Int64?) { self = value.map { .integer($0) } ?? .null }
    public init(_ value: Double?) { self = value.map { .real($0) } ?? .null }
    public init(_ value: Bool) { self = .integer(value ? 1 : 0) }
}

/// A compiled statement. Owns one `sqlite3_stmt*`, finalized in `deinit`. Used on its connection's thread only.
public final class Statement {
    private let handle: OpaquePointer
    private let database: OpaquePointer
    /// The SQL this statement was compiled from.
    public let sql: String

    init(handle: OpaquePointer, database: OpaquePointer, sql: String) {
        self.handle = handle
        self.database = database
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    private func check(_ rc: Int32) throws(SQLiteError) {
        guard rc == SQLITE_OK else {
            throw SQLiteError(rc, on: database, sql: sql)
        }
    }

    // MARK: Binding (parameters are numbered from 1)

    public func bind(_ value: SQLiteValue, at index: Int32) throws(SQLiteError) {
        switch value {
        case .integer(let v): try check(sqlite3_bind_int64(handle, index, v))
        case .real(let v): try check(sqlite3_bind_double(handle, index, v))
        case .text(let v): try check(sqlite3_bind_text(handle, index, v, -1, transient))
        case .blob(let v):
            let rc = v.withUnsafeBytes { raw in
                // A zero-length blob still binds as a blob, not NULL.
                sqlite3_bind_blob64(handle, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), UInt64(raw.count), transient)
            }
            try check(rc)
        case .null: try check(sqlite3_bind_null(handle, index))
        }
    }

    public func bind(_ value: Int64, at index: Int32) throws(SQLiteError) { try check(sqlite3_bind_int64(handle, index, value)) }
    public func bind(_ value: Int, at index: Int32) throws(SQLiteError) { try bind(Int64(value), at: index) }
    public func bind(_ value: Double, at index: Int32) throws(SQLiteError) { try check(sqlite3_bind_double(handle, index, value)) }
    public func bind(_ value: String, at index: Int32) throws(SQLiteError) { try bind(.text(value), at: index) }

    /// Binds the values to parameters 1...n.
    public func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    /// The index of a named parameter such as `:page`, or nil.
    public func parameterIndex(_ name: String) -> Int32? {
        let index = sqlite3_bind_parameter_index(handle, name)
        return index == 0 ? nil : index
    }

    // MARK: Stepping

    /// Advances to the next row: true when a row is ready, false when the statement is done.
    @discardableResult
    public func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = SQLiteError(rc, on: database, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Rewinds the statement and clears its bindings, ready to run again.
    public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Binds `values`, runs to completion, and resets. Returns the number of rows changed.
    @discardableResult
    public func execute(_ values: [SQLiteValue] = []) throws(SQLiteError) -> Int {
        reset()
        try bind(values)
        while try step() {}
        let changed = Int(sqlite3_changes64(database))
        sqlite3_reset(handle)
        return changed
    }

    /// Binds `values` and maps every row.
    public func rows<T>(_ values: [SQLiteValue] = [], _ map: (Statement) throws -> T) throws -> [T] {
        reset()
        try bind(values)
        var result: [T] = []
        while try step() { result.append(try map(self)) }
        sqlite3_reset(handle)
        return result
    }

    /// Binds `values` and maps the first row, if any.
    public func first<T>(_ values: [SQLiteValue] = [], _ map: (Statement) throws -> T) throws -> T? {
        reset()
        try bind(values)
        defer { sqlite3_reset(handle) }
        return try step() ? try map(self) : nil
    }

    // MARK: Columns (numbered from 0)

    public var columnCount: Int32 { sqlite3_column_count(handle) }
    public func columnName(_ index: Int32) -> String { String(cString: sqlite3_column_name(handle, index)) }
    public func isNull(_ index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_NULL }
    public func int64(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }
    public func int(_ index: Int32) -> Int { Int(sqlite3_column_int64(handle, index)) }
    public func double(_ index: Int32) -> Double { sqlite3_column_double(handle, index) }
    public func optionalInt(_ index: Int32) -> Int? { isNull(index) ? nil : int(index) }
    public func optionalDouble(_ index: Int32) -> Double? { isNull(index) ? nil : double(index) }

    public func text(_ index: Int32) -> String { optionalText(index) ?? "" }

    public func optionalText(_ index: Int32) -> String? {
        guard let bytes = sqlite3_column_text(handle, index) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    public func blob(_ index: Int32) -> [UInt8] {
        guard let bytes = sqlite3_column_blob(handle, index) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, index))
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// The column as a value of whatever type SQLite stored.
    public func value(_ index: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: .integer(int64(index))
        case SQLITE_FLOAT: .real(double(index))
        case SQLITE_TEXT: .text(text(index))
        case SQLITE_BLOB: .blob(blob(index))
        default: .null
        }
    }
}
