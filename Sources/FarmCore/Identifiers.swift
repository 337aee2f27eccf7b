/// A page in the store.
public struct PageID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public init(_ rawValue: Int64) { self.rawValue = rawValue }
    public var description: String { String(rawValue) }
    public static func < (a: PageID, b: PageID) -> Bool { a.rawValue < b.rawValue }
}

/// A document (one submitted file, or a folder submitted as one document).
public struct DocumentID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public init(_ rawValue: Int64) { self.rawValue = rawValue }
    public var description: String { String(rawValue) }
    public static func < (a: DocumentID, b: DocumentID) -> Bool { a.rawValue < b.rawValue }
}

/// One try at a page: the page and the attempt's number (1, 2, …), unique per page for all time.
public struct AttemptID: Hashable, Sendable, CustomStringConvertible {
    public let page: PageID
    public let number: Int

    public init(page: PageID, number: Int) {
        self.page = page
        self.number = number
    }

    public var description: String { "\(page)#\(number)" }
}

/// A worker process, named by itself: "host/pid/random".
public struct WorkerID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
    public static func < (a: WorkerID, b: WorkerID) -> Bool { a.rawValue < b.rawValue }
}

/// Where a page is in its life: queued → leased → done, or failed after its last attempt.
public enum PageState: String, Sendable, CaseIterable, Comparable {
    case queued, leased, done, failed

    public static func < (a: PageState, b: PageState) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}
