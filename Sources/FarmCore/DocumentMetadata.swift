/// A document's catalogue fields (issue 36): what an archivist types about it, stored in the store, searched with
/// its name, and written into its PDF's `/Info` and XMP on export. An empty field is unset.
public struct DocumentMetadata: Sendable, Equatable {
    /// The fields, in the order they are shown and stored; `rawValue` is the API's and the store's name.
    public enum Field: String, Sendable, CaseIterable {
        case title, date, creator, identifier, shelfmark

        /// Its name as shown to people (the IIIF manifest's metadata labels).
        public var label: String {
            switch self {
            case .title: "Title"
            case .date: "Date"
            case .creator: "Creator"
            case .identifier: "Identifier"
            case .shelfmark: "Shelfmark"
            }
        }

        /// The most characters a value may have.
        public var maxLength: Int {
            switch self {
            case .title: 500
            case .creator: 200
            case .date: 10
            case .identifier, .shelfmark: 100
            }
        }
    }

    public var title = ""
    /// ISO 8601 calendar date, as precise as known: `1887`, `1887-03` or `1887-03-12` (XMP's `dc:date` is a Date).
    public var date = ""
    public var creator = ""
    public var identifier = ""
    public var shelfmark = ""

    public init(title: String = "", date: String = "", creator: String = "", identifier: String = "", shelfmark: String = "") {
        self.title = title
        self.date = date
        self.creator = creator
        self.identifier = identifier
        self.shelfmark = shelfmark
    }

    public subscript(field: Field) -> String {
        get {
            switch field {
            case .title: title
            case .date: date
            case .creator: creator
            case .identifier: identifier
            case .shelfmark: shelfmark
            }
        }
        set {
            switch field {
            case .title: title = newValue
            case .date: date = newValue
            case .creator: creator = newValue
            case .identifier: identifier = newValue
            case .shelfmark: shelfmark = newValue
            }
        }
    }

    /// True when no field is set.
    public var isEmpty: Bool { Field.allCases.allSatisfy { self[$0].isEmpty } }

    /// `value` for `field` as stored: spaces at either end removed; or why it cannot be (names the field).
    public static func checked(_ value: String, for field: Field) -> Result<String, MetadataError> {
        let trimmed = String(value.trimmingSpaces)
        if field == .date, !trimmed.isEmpty, !isCalendarDate(trimmed) {
            // Said before the length: "14 May 1829" is not a date, whatever its length.
            return .failure(MetadataError(field: field, reason: "'\(trimmed.prefix(40))' is not a date: write YYYY, YYYY-MM or YYYY-MM-DD"))
        }
        if trimmed.count > field.maxLength {
            return .failure(MetadataError(field: field, reason: "is \(trimmed.count) characters long; at most \(field.maxLength)"))
        }
        if let bad = trimmed.unicodeScalars.first(where: isRefused) {
            let code = String(bad.value, radix: 16, uppercase: true)
            return .failure(MetadataError(field: field, reason: "holds U+\(String(repeating: "0", count: max(0, 4 - code.count)))\(code), "
                + "a control or direction character; one line of text only"))
        }
        return .success(trimmed)
    }

    /// Control characters (line breaks, tabs, NUL, C1) and the invisible direction overrides, which would make a
    /// value read differently from what it holds.
    static func isRefused(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0xFEFF: true
        default: false
        }
    }

    /// `YYYY`, `YYYY-MM` or `YYYY-MM-DD` with a month 01-12 and a day that month has.
    static func isCalendarDate(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), parts[0].count == 4,
              parts.dropFirst().allSatisfy({ $0.count == 2 }),
              parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }) else { return false }
        let numbers = parts.compactMap { Int($0) }
        if numbers.count >= 2, !(1...12).contains(numbers[1]) { return false }
        if numbers.count == 3 {
            let (year, month, day) = (numbers[0], numbers[1], numbers[2])
            let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
            let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
            if !(1...days).contains(day) { return false }
        }
        return true
    }
}

/// A metadata value refused: which field and why.
public struct MetadataError: Error, CustomStringConvertible, Sendable, Equatable {
    public let field: DocumentMetadata.Field
    public let reason: String
    public var description: String { "\(field.rawValue) \(reason)" }
}

extension StringProtocol {
    fileprivate var trimmingSpaces: SubSequence {
        let start = firstIndex { !$0.isWhitespace } ?? endIndex
        let end = lastIndex { !$0.isWhitespace }.map(index(after:)) ?? start
        return self[start..<end]
    }
}
