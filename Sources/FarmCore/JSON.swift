/// A JSON value. Objects keep their keys in insertion order, so output is stable and diffable.
public enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    public static func == (lhs: JSON, rhs: JSON) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case let (.bool(a), .bool(b)): a == b
        case let (.int(a), .int(b)): a == b
        case let (.double(a), .double(b)): a == b
        case let (.int(a), .double(b)), let (.double(b), .int(a)): Double(a) == b
        case let (.string(a), .string(b)): a == b
        case let (.array(a), .array(b)): a == b
        case let (.object(a), .object(b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    // MARK: Access

    public subscript(key: String) -> JSON? {
        guard case .object(let fields) = self else { return nil }
        return fields.first { $0.0 == key }?.1
    }

    public subscript(index: Int) -> JSON? {
        guard case .array(let items) = self, items.indices.contains(index) else { return nil }
        return items[index]
    }

    public var stringValue: String? { if case .string(let v) = self { v } else { nil } }
    public var boolValue: Bool? { if case .bool(let v) = self { v } else { nil } }
    public var arrayValue: [JSON]? { if case .array(let v) = self { v } else { nil } }
    public var objectValue: [(String, JSON)]? { if case .object(let v) = self { v } else { nil } }
    public var isNull: Bool { if case .null = self { true } else { false } }

    public var intValue: Int? {
        switch self {
        case .int(let v): Int(exactly: v)
        case .double(let v): Self.whole(v)
        default: nil
        }
    }

    /// `v` as an Int when it is a whole number an Int holds and a double counts exactly (below 9e15), else nil.
    static func whole(_ v: Double) -> Int? { v.isFinite && v.rounded() == v && abs(v) < 9e15 ? Int(v) : nil }

    public var doubleValue: Double? {
        switch self {
        case .int(let v): Double(v)
        case .double(let v): v
        default: nil
        }
    }

    // MARK: Building

    public init(_ value: String) { self = .string(value) }
    public init(_ value: Int) { self = .int(Int64(value)) }
    public init(_ value: Double) { self = .double(value) }
    public init(_ value: Bool) { self = .bool(value) }
    public init(_ value: String?) { self = value.map { .string($0) } ?? .null }
    public init(_ value: Int?) { self = value.map { .int(Int64($0)) } ?? .null }
    public init(_ value: Double?) { self = value.map { .double($0) } ?? .null }

    /// A number rounded to `places` decimal places (for confidences and timings).
    public static func rounded(_ value: Double, places: Int = 2) -> JSON {
        guard value.isFinite else { return .null }
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        return .double((value * scale).rounded() / scale)
    }
}

extension JSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral, ExpressibleByFloatLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSON)...) { self = .object(elements) }
    public init(nilLiteral: ()) { self = .null }
    public init(floatLiteral value: Double) { self = .double(value) }
}

// MARK: - Writing

extension JSON {
    /// Compact JSON text.
    public var rendered: String { String(decoding: bytes, as: UTF8.self) }

    /// Compact JSON as UTF-8 bytes (what goes on the wire).
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        write(to: &out, indent: nil, level: 0)
        return out
    }

    /// JSON text with two-space indentation.
    public var pretty: String {
        var out: [UInt8] = []
        write(to: &out, indent: "  ", level: 0)
        return String(decoding: out, as: UTF8.self)
    }

    /// Compact JSON appended to `out`: a renderer writing a document of its own puts values it holds as JSON in it.
    public func write(into out: inout [UInt8]) { write(to: &out, indent: nil, level: 0) }

    /// A string as `.string(value)` writes it, appended to `out`.
    @inlinable
    public static func write<Sink: ByteSink & ~Copyable>(_ value: String, into out: inout Sink) { writeString(value, to: &out) }

    /// A number as `.int(value)` writes it, appended to `out`.
    @inlinable
    public static func write<Sink: ByteSink & ~Copyable>(_ value: Int, into out: inout Sink) { out.append(decimal: value) }

    /// A number as `rounded(value, places:)` writes it, appended to `out`.
    @inlinable
    public static func write<Sink: ByteSink & ~Copyable>(_ value: Double, places: Int, into out: inout Sink) {
        guard value.isFinite else { return out.append(literal: "null") }
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = (value * scale).roundedHalfAway
        // Fixed point by integer arithmetic: the value is `units / 10^places`, correctly rounded (both exact doubles);
        // below 10^15 units that decimal is the shortest that reads back as it, which is what `String(Double)` (and
        // so `write(number:)`) writes, trailing zeros dropped, as long as it has no exponent (|value| ≥ 0.0001).
        guard places > 0 && places <= 4 && abs(scaled) < 1e15 else { return write(number: scaled / scale, into: &out) }
        let units = Int(scaled)
        // Tenths and hundredths (corners, confidences: a dozen numbers a word) with constant divisors.
        if places <= 2 {
            let magnitude = units.magnitude
            let whole = places == 1 ? magnitude / 10 : magnitude / 100
            let fraction = places == 1 ? magnitude % 10 : magnitude % 100
            if units < 0 && (whole != 0 || fraction != 0) { out.append(UInt8(ascii: "-")) }
            out.append(decimal: Int(whole))
            guard fraction != 0 else { return }
            out.append(UInt8(ascii: "."))
            if places == 1 || fraction % 10 == 0 {
                out.append(UInt8(ascii: "0") + UInt8(places == 1 ? fraction : fraction / 10))
            } else {
                out.append(UInt8(ascii: "0") + UInt8(fraction / 10))
                out.append(UInt8(ascii: "0") + UInt8(fraction % 10))
            }
            return
        }
        var divisor = 1
        for _ in 0..<places { divisor *= 10 }
        var fraction = abs(units % divisor)
        if fraction == 0 { return write(units / divisor, into: &out) }
        if units < 0 { out.append(UInt8(ascii: "-")) }
        write(abs(units / divisor), into: &out)
        out.append(UInt8(ascii: "."))
        var digits = places
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        // `digits` digits of `fraction`, with its leading zeros.
        var power = 1
        for _ in 1..<digits { power *= 10 }
        while power > 0 {
            out.append(UInt8(ascii: "0") + UInt8(fraction / power % 10))
            power /= 10
        }
    }

    /// A number as `.double(value)` writes it (`format`), appended to `out`.
    @inlinable
    public static func write<Sink: ByteSink & ~Copyable>(number value: Double, into out: inout Sink) {
        if value.isFinite && value.rounded() == value && abs(value) < 1e15 {
            write(Int(value), into: &out)
        } else {
            var text = format(value)
            text.withUTF8 { out.append(bytes: $0) }
        }
    }

    private func write(to out: inout [UInt8], indent: String?, level: Int) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let v): out.append(contentsOf: (v ? "true" : "false").utf8)
        case .int(let v): out.append(contentsOf: String(v).utf8)
        case .double(let v): JSON.write(number: v, into: &out)
        case .string(let v): JSON.writeString(v, to: &out)
        case .array(let items):
            if items.isEmpty { out.append(contentsOf: "[]".utf8); return }
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(&out, indent, level + 1)
                item.write(to: &out, indent: indent, level: level + 1)
            }
            newline(&out, indent, level)
            out.append(UInt8(ascii: "]"))
        case .object(let fields):
            if fields.isEmpty { out.append(contentsOf: "{}".utf8); return }
            out.append(UInt8(ascii: "{"))
            for (i, (key, value)) in fields.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(&out, indent, level + 1)
                JSON.writeString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                if indent != nil { out.append(UInt8(ascii: " ")) }
                value.write(to: &out, indent: indent, level: level + 1)
            }
            newline(&out, indent, level)
            out.append(UInt8(ascii: "}"))
        }
    }

    private func newline(_ out: inout [UInt8], _ indent: String?, _ level: Int) {
        guard let indent else { return }
        out.append(UInt8(ascii: "\n"))
        for _ in 0..<level { out.append(contentsOf: indent.utf8) }
    }

    /// A number as JSON writes it: integers without a fraction.
    public static func format(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value.rounded() == value && abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    @inlinable
    static func writeString<Sink: ByteSink & ~Copyable>(_ value: String, to out: inout Sink) {
        out.append(UInt8(ascii: "\""))
        writeEscaped(value, into: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// A string's characters as a JSON string holds them (escaped), without its quotes, appended to `out`: a writer
    /// of a string it does not make (a line of words) writes its parts this way, between quotes of its own.
    @inlinable
    public static func writeEscaped<Sink: ByteSink & ~Copyable>(_ value: String, into out: inout Sink) {
        var value = value
        value.withUTF8 { bytes in
            // Most strings need no escaping: runs without a byte to escape are copied whole.
            let n = bytes.count
            var run = 0, index = 0
            while index < n {
                let byte = bytes[index]
                if byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") && byte != 0xE2 {
                    index += 1
                    continue
                }
                let separator = byte == 0xE2 && index + 2 < n && bytes[index + 1] == 0x80 && (bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9)
                if byte == 0xE2 && !separator {
                    index += 1
                    continue
                }
                if run < index { out.append(bytes: UnsafeBufferPointer(rebasing: bytes[run..<index])) }
                switch byte {
                case UInt8(ascii: "\""): out.append(literal: "\\\"")
                case UInt8(ascii: "\\"): out.append(literal: "\\\\")
                case 0x0A: out.append(literal: "\\n")
                case 0x0D: out.append(literal: "\\r")
                case 0x09: out.append(literal: "\\t")
                case 0xE2:
                    // U+2028 and U+2029 are valid JSON but break JavaScript readers.
                    out.append(literal: bytes[index + 2] == 0xA8 ? "\\u2028" : "\\u2029")
                    index += 2
                default:
                    let hex: StaticString = "0123456789abcdef"
                    out.append(literal: "\\u00")
                    hex.withUTF8Buffer { digits in
                        out.append(digits[Int(byte >> 4)])
                        out.append(digits[Int(byte & 0xF)])
                    }
                }
                index += 1
                run = index
            }
            if run < n { out.append(bytes: UnsafeBufferPointer(rebasing: bytes[run..<n])) }
        }
    }
}

// MARK: - Parsing

/// Why JSON text could not be parsed, with the byte offset.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public let offset: Int
    public let reason: String
    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}

extension JSON {
    /// Parses JSON text. Nesting deeper than `maxDepth` is refused, so hostile input cannot exhaust the stack.
    public static func parse(_ text: String, maxDepth: Int = 64) throws(JSONParseError) -> JSON {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }

    public static func parse(_ bytes: [UInt8], maxDepth: Int = 64) throws(JSONParseError) -> JSON {
        var parser = JSONParser(bytes: bytes, maxDepth: maxDepth)
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.index == bytes.count else { throw parser.fail("trailing characters") }
        return value
    }
}

private struct JSONParser {
    let bytes: [UInt8]
    let maxDepth: Int
    var index = 0

    init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    func fail(_ reason: String) -> JSONParseError { JSONParseError(offset: index, reason: reason) }

    mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    mutating func value(depth: Int) throws(JSONParseError) -> JSON {
        guard depth <= maxDepth else { throw fail("nested too deeply") }
        skipSpace()
        guard index < bytes.count else { throw fail("unexpected end") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default: return try number()
        }
    }

    mutating func literal(_ word: String) throws(JSONParseError) {
        let expected = Array(word.utf8)
        guard index + expected.count <= bytes.count, Array(bytes[index..<index + expected.count]) == expected else {
            throw fail("unexpected character")
        }
        index += expected.count
    }

    mutating func object(depth: Int) throws(JSONParseError) -> JSON {
        index += 1
        var fields: [(String, JSON)] = []
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(fields) }
        while true {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a key") }
            let key = try string()
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            index += 1
            fields.append((key, try value(depth: depth + 1)))
            skipSpace()
            guard index < bytes.count else { throw fail("unexpected end") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(fields) }
            throw fail("expected ',' or '}'")
        }
    }

    mutating func array(depth: Int) throws(JSONParseError) -> JSON {
        index += 1
        var items: [JSON] = []
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
        while true {
            items.append(try value(depth: depth + 1))
            skipSpace()
            guard index < bytes.count else { throw fail("unexpected end") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
            throw fail("expected ',' or ']'")
        }
    }

    mutating func string() throws(JSONParseError) -> String {
        index += 1
        // Fast path: no escapes before the closing quote.
        var end = index
        while end < bytes.count {
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") {
                guard let text = Self.text(bytes, index..<end) else { throw fail("invalid UTF-8") }
                index = end + 1
                return text
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            end += 1
        }
        var out: [UInt8] = Array(bytes[index..<end])
        index = end
        while true {
            guard index < bytes.count else { throw fail("unterminated string") }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = Self.text(out, 0..<out.count) else { throw fail("invalid UTF-8") }
                return text
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { throw fail("unterminated escape") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                        else { throw fail("lone surrogate") }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw fail("bad surrogate pair") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw fail("bad \\u escape") }
                    out.append(contentsOf: Array(String(Character(unicode)).utf8))
                default: throw fail("bad escape")
                }
            default:
                guard byte >= 0x20 else { throw fail("control character in string") }
                out.append(byte)
            }
        }
    }

    /// `bytes[range]` as a String when it is valid UTF-8, as `String(validating:as:)` has it, without its generic
    /// path (the type metadata it looks up on every call was a tenth of reading a page model): the bytes are
    /// decoded repairing, and a repair changes them (a replacement character is three bytes that were not there).
    static func text(_ bytes: [UInt8], _ range: Range<Int>) -> String? {
        bytes.withUnsafeBufferPointer { buffer in
            let slice = UnsafeBufferPointer(rebasing: buffer[range])
            var ascii = true
            for byte in slice where byte >= 0x80 {
                ascii = false
                break
            }
            let text = String(decoding: slice, as: UTF8.self)
            if ascii { return text }
            var copy = text
            return copy.withUTF8 { $0.elementsEqual(slice) } ? text : nil
        }
    }

    /// Powers of ten that doubles hold exactly.
    private static let exactPowers: [Double] = (0...22).map { p in (0..<p).reduce(1.0) { r, _ in r * 10 } }

    /// Powers of five that fit in 63 bits (5^0 … 5^27): the divisors of `decimal` past `exactPowers`.
    private static let powersOfFive: [UInt64] = (0...27).map { p in (0..<p).reduce(UInt64(1)) { r, _ in r * 5 } }

    /// A number without its sign (`digits[.digits][e[±]digits]`, where JSON's numbers with a fraction or an exponent
    /// are: confidences, timings, the map to the original) read without making its text, to the double `Double(text)`
    /// (strtod) reads: the nearest, ties to even. Its significant digits, at most 19, make a whole number `w` held
    /// exactly, and the value is `w·10^e`. With `w` ≤ 2^53 and |e| ≤ 22 one multiplication or division by an exact
    /// power of ten rounds correctly (Clinger's fast path); a model's doubles are written in full (17 digits), so
    /// otherwise, for −27 ≤ e < 0, `w / 5^-e` is divided in integers to 64 bits of quotient, the remainder folded
    /// into its last bit, rounded once to 53 bits, and scaled by 2^e exactly (the result is far from subnormal).
    /// nil for any other form or range (read by `Double(text)`).
    private func decimal(_ range: Range<Int>) -> Double? {
        var index = range.lowerBound
        let end = range.upperBound
        var w: UInt64 = 0, significant = 0, fractionDigits = 0, integerDigits = 0
        while index < end, bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9") {
            let digit = UInt64(bytes[index] - UInt8(ascii: "0"))
            if significant > 0 || digit != 0 { significant += 1 }
            w = w &* 10 &+ digit
            integerDigits += 1
            index += 1
        }
        guard integerDigits > 0 else { return nil }
        if index < end && bytes[index] == UInt8(ascii: ".") {
            index += 1
            while index < end, bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9") {
                let digit = UInt64(bytes[index] - UInt8(ascii: "0"))
                if significant > 0 || digit != 0 { significant += 1 }
                w = w &* 10 &+ digit
                fractionDigits += 1
                index += 1
            }
            guard fractionDigits > 0 else { return nil }
        }
        // More than 19 significant digits may not fit in 64 bits (checked before `w` is used).
        guard significant <= 19 else { return nil }
        var exponent = 0
        if index < end && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            index += 1
            var negative = false
            if index < end && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) {
                negative = bytes[index] == UInt8(ascii: "-")
                index += 1
            }
            var digits = 0
            while index < end, bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9") {
                exponent = exponent * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                digits += 1
                guard digits <= 4 else { return nil }
                index += 1
            }
            guard digits > 0 else { return nil }
            if negative { exponent = -exponent }
        }
        guard index == end else { return nil }
        if w == 0 { return 0 }
        let e = exponent - fractionDigits
        if e == 0 { return Double(w) }
        if w <= 1 << 53 && e >= -22 && e <= 22 {
            return e > 0 ? Double(w) * Self.exactPowers[e] : Double(w) / Self.exactPowers[-e]
        }
        guard e < 0 && e >= -27 else { return nil }
        let divisor = Self.powersOfFive[-e]
        // (w << shift) / divisor has 64 bits: w < 2^lw and divisor ≥ 2^(ld-1) keep it below 2^64 (the division does
        // not overflow), w ≥ 2^(lw-1) and divisor < 2^ld keep it above 2^62, and one more bit lifts it past 2^63.
        let lw = 64 - w.leadingZeroBitCount, ld = 64 - divisor.leadingZeroBitCount
        var shift = 63 + ld - lw
        var (quotient, remainder) = divisor.dividingFullWidth(Self.shifted(w, by: shift))
        if quotient < 1 << 63 {
            shift += 1
            (quotient, remainder) = divisor.dividingFullWidth(Self.shifted(w, by: shift))
        }
        // The bits below the 53 kept are 11 of the quotient and the remainder: a remainder makes an exact half more
        // than half, which the quotient's last bit says (it is below the rounding bit).
        if remainder != 0 { quotient |= 1 }
        return Double(sign: .plus, exponent: e - shift, significand: Double(quotient))
    }

    /// `value · 2^shift` (shift < 128, the product below 2^128) as the (high, low) halves `dividingFullWidth` takes.
    @inline(__always)
    private static func shifted(_ value: UInt64, by shift: Int) -> (high: UInt64, low: UInt64) {
        if shift == 0 { return (0, value) }
        if shift < 64 { return (value >> (64 - shift), value << shift) }
        return (value << (shift - 64), 0)
    }

    mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw fail("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            index += 1
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw fail("bad hex digit")
            }
            value = value * 16 + digit
        }
        return value
    }

    mutating func number() throws(JSONParseError) -> JSON {
        switch try scalar() {
        case .int(let value): .int(value)
        case .double(let value): .double(value)
        }
    }

    /// A number as `number()` reads it, without its `JSON` (whose copies are a switch over every kind of value): the
    /// reader of a page model takes tens of thousands a page.
    enum Scalar {
        case int(Int64)
        case double(Double)
    }

    mutating func scalar() throws(JSONParseError) -> Scalar {
        let start = index
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        let digitsStart = index
        while index < bytes.count {
            let byte = bytes[index]
            if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                index += 1
            } else if byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
                || ((byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")) && index > digitsStart)
            {
                isInteger = false
                index += 1
            } else {
                break
            }
        }
        guard index > digitsStart else { throw fail("unexpected character") }
        // Integers of up to 18 digits (boxes, sizes, counts: most numbers) read without making their text.
        if isInteger && index - digitsStart <= 18 {
            var value: Int64 = 0
            for byte in bytes[digitsStart..<index] { value = value * 10 + Int64(byte - UInt8(ascii: "0")) }
            return .int(digitsStart > start ? -value : value)
        }
        if !isInteger, let value = decimal(digitsStart..<index) { return .double(digitsStart > start ? -value : value) }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger, let value = Int64(text) { return .int(value) }
        guard let value = Double(text), value.isFinite else { throw fail("bad number") }
        return .double(value)
    }
}

// MARK: - Reading without a tree

/// JSON text read value by value, without building its tree: a decoder that knows the shape of what it reads
/// (`PageModel`) walks it with this, and takes as a tree (`value()`) only the parts it keeps as JSON. What it
/// accepts is what `JSON.parse` accepts; numbers read as `intValue` and `doubleValue` read them.
public struct JSONReader {
    private var parser: JSONParser
    private var depth = 0

    public init(_ bytes: [UInt8], maxDepth: Int = 64) {
        parser = JSONParser(bytes: bytes, maxDepth: maxDepth)
    }

    /// Reads an object, calling `field` with each key in turn: `field` reads the key's value.
    public mutating func object(_ field: (inout JSONReader, String) throws -> Void) throws {
        try open(UInt8(ascii: "{"))
        defer { depth -= 1 }
        parser.skipSpace()
        if peek == UInt8(ascii: "}") { return parser.index += 1 }
        while true {
            parser.skipSpace()
            guard peek == UInt8(ascii: "\"") else { throw parser.fail("expected a key") }
            let key = try parser.string()
            parser.skipSpace()
            guard peek == UInt8(ascii: ":") else { throw parser.fail("expected ':'") }
            parser.index += 1
            try field(&self, key)
            parser.skipSpace()
            switch peek {
            case UInt8(ascii: ","): parser.index += 1
            case UInt8(ascii: "}"): return parser.index += 1
            default: throw parser.fail("expected ',' or '}'")
            }
        }
    }

    /// Reads an object as `object(_:)` does, giving `field` each key as its UTF-8 bytes (valid during the call) instead
    /// of a String: a decoder of many small objects (a page model's words) tells their keys apart without making them.
    public mutating func object(keyBytes field: (inout JSONReader, UnsafeBufferPointer<UInt8>) throws -> Void) throws {
        try open(UInt8(ascii: "{"))
        defer { depth -= 1 }
        parser.skipSpace()
        if peek == UInt8(ascii: "}") { return parser.index += 1 }
        let bytes = parser.bytes
        while true {
            parser.skipSpace()
            guard peek == UInt8(ascii: "\"") else { throw parser.fail("expected a key") }
            // A key without escapes is its bytes (checked as a String's are); one with escapes is read as a String.
            let start = parser.index + 1
            var end = start, plain = true, ascii = true
            while end < bytes.count {
                let byte = bytes[end]
                if byte == UInt8(ascii: "\"") { break }
                if byte == UInt8(ascii: "\\") || byte < 0x20 {
                    plain = false
                    break
                }
                if byte >= 0x80 { ascii = false }
                end += 1
            }
            var escaped: String?
            if plain && end < bytes.count {
                guard ascii || JSONParser.text(bytes, start..<end) != nil else { throw parser.fail("invalid UTF-8") }
                parser.index = end + 1
            } else {
                escaped = try parser.string()
            }
            parser.skipSpace()
            guard peek == UInt8(ascii: ":") else { throw parser.fail("expected ':'") }
            parser.index += 1
            if var key = escaped {
                try key.withUTF8 { try field(&self, $0) }
            } else {
                try bytes.withUnsafeBufferPointer { try field(&self, UnsafeBufferPointer(rebasing: $0[start..<end])) }
            }
            parser.skipSpace()
            switch peek {
            case UInt8(ascii: ","): parser.index += 1
            case UInt8(ascii: "}"): return parser.index += 1
            default: throw parser.fail("expected ',' or '}'")
            }
        }
    }

    /// Reads an array, calling `element` for each item in turn: `element` reads it.
    public mutating func array(_ element: (inout JSONReader) throws -> Void) throws {
        try open(UInt8(ascii: "["))
        defer { depth -= 1 }
        parser.skipSpace()
        if peek == UInt8(ascii: "]") { return parser.index += 1 }
        while true {
            try element(&self)
            parser.skipSpace()
            switch peek {
            case UInt8(ascii: ","): parser.index += 1
            case UInt8(ascii: "]"): return parser.index += 1
            default: throw parser.fail("expected ',' or ']'")
            }
        }
    }

    /// A string; anything else is an error.
    public mutating func string() throws(JSONParseError) -> String {
        parser.skipSpace()
        guard peek == UInt8(ascii: "\"") else { throw parser.fail("expected a string") }
        return try parser.string()
    }

    /// A number, as `doubleValue`; anything else is an error.
    public mutating func double() throws(JSONParseError) -> Double {
        switch try number() {
        case .int(let value): return Double(value)
        case .double(let value): return value
        }
    }

    /// A whole number, as `intValue`; anything else is an error.
    public mutating func int() throws(JSONParseError) -> Int {
        let whole: Int? = switch try number() {
        case .int(let value): Int(exactly: value)
        case .double(let value): JSON.whole(value)
        }
        guard let whole else { throw parser.fail("expected an integer") }
        return whole
    }

    /// The next value as a tree.
    public mutating func value() throws(JSONParseError) -> JSON { try parser.value(depth: depth) }

    /// Whether the whole text has been read (nothing but white space left).
    public mutating func isAtEnd() -> Bool {
        parser.skipSpace()
        return parser.index == parser.bytes.count
    }

    /// An error at the reader's place: what a decoder throws when a value is not what it reads.
    public func failure(_ reason: String) -> JSONParseError { parser.fail(reason) }

    private var peek: UInt8? { parser.index < parser.bytes.count ? parser.bytes[parser.index] : nil }

    private mutating func number() throws(JSONParseError) -> JSONParser.Scalar {
        parser.skipSpace()
        guard let byte = peek, byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else {
            throw parser.fail("expected a number")
        }
        return try parser.scalar()
    }

    private mutating func open(_ bracket: UInt8) throws(JSONParseError) {
        parser.skipSpace()
        guard peek == bracket else { throw parser.fail(bracket == UInt8(ascii: "{") ? "expected an object" : "expected an array") }
        guard depth < parser.maxDepth else { throw parser.fail("nested too deeply") }
        depth += 1
        parser.index += 1
    }
}
