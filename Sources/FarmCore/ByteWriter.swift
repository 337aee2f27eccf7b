/// Where UTF-8 text is appended, a byte or a run of bytes at a time: a byte array, or a `ByteWriter`. The writers of
/// numbers, JSON strings and XML text (`JSON.write`, `XML.escape`) append to either.
public protocol ByteSink: ~Copyable {
    mutating func append(_ byte: UInt8)
    mutating func append(bytes: UnsafeBufferPointer<UInt8>)
    /// A whole number in decimal digits, as `String(value)` writes it.
    mutating func append(decimal value: Int)
}

extension Array: ByteSink where Element == UInt8 {
    @inlinable
    public mutating func append(bytes: UnsafeBufferPointer<UInt8>) { append(contentsOf: bytes) }

    /// The digits made from the last, on the stack, then appended at once.
    @inlinable
    public mutating func append(decimal value: Int) {
        if value >= 0 && value < 10 { return append(UInt8(truncatingIfNeeded: value) &+ UInt8(ascii: "0")) }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var magnitude = value.magnitude
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(truncatingIfNeeded: magnitude % 10) &+ UInt8(ascii: "0")
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                start -= 1
                digits[start] = UInt8(ascii: "-")
            }
            append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }
}

/// A document written as UTF-8 bytes appended in place, into memory of its own: render on demand writes every page's
/// hOCR, ALTO, PAGE and JSON at export, tens of thousands of short runs a page, and an array's `append(contentsOf:)`
/// costs several times a copy into memory known to have room (it was a third of rendering). Growing doubles it;
/// `bytes()` gives the document.
public struct ByteWriter: ~Copyable, ByteSink {
    @usableFromInline var base: UnsafeMutablePointer<UInt8>
    @usableFromInline var capacity: Int
    @usableFromInline var written = 0
    /// The bytes written so far.
    public var count: Int { written }

    public init(capacity: Int) {
        self.capacity = max(16, capacity)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    @usableFromInline
    mutating func grow(toHold needed: Int) {
        let larger = max(capacity * 2, needed)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.update(from: base, count: count)
        base.deallocate()
        base = moved
        capacity = larger
    }

    @inlinable @inline(__always)
    public mutating func append(_ byte: UInt8) {
        if written == capacity { grow(toHold: written + 1) }
        base[written] = byte
        written += 1
    }

    @inlinable @inline(__always)
    public mutating func append(bytes: UnsafeBufferPointer<UInt8>) {
        guard let start = bytes.baseAddress else { return }
        append(start, count: bytes.count)
    }

    @inlinable @inline(__always)
    public mutating func append(_ start: UnsafePointer<UInt8>, count n: Int) {
        if written + n > capacity { grow(toHold: written + n) }
        (base + written).update(from: start, count: n)
        written += n
    }

    /// Written in place, from the last digit (the digits counted first), two digits at a time: a page's documents
    /// hold tens of thousands of numbers, nearly all of them below 100,000 (coordinates, ids).
    @inlinable
    public mutating func append(decimal value: Int) {
        if value >= 0 && value < 10 { return append(UInt8(truncatingIfNeeded: value) &+ UInt8(ascii: "0")) }
        var magnitude = value.magnitude
        var digits: Int
        if magnitude < 100_000 {
            digits = magnitude < 10 ? 1 : magnitude < 100 ? 2 : magnitude < 1000 ? 3 : magnitude < 10_000 ? 4 : 5
        } else {
            digits = 6
            var bound: UInt = 1_000_000
            while digits < 20 && magnitude >= bound {
                digits += 1
                bound = bound &* 10
            }
        }
        let length = digits + (value < 0 ? 1 : 0)
        if written + length > capacity { grow(toHold: written + length) }
        if value < 0 { base[written] = UInt8(ascii: "-") }
        var digit = base + written + length
        let pairs = Self.digitPairs.utf8Start
        while magnitude >= 10 {
            let pair = Int(truncatingIfNeeded: magnitude % 100) &* 2
            magnitude /= 100
            digit -= 2
            digit[0] = pairs[pair]
            digit[1] = pairs[pair + 1]
        }
        if magnitude > 0 {
            digit -= 1
            digit.pointee = UInt8(truncatingIfNeeded: magnitude) &+ UInt8(ascii: "0")
        }
        written += length
    }

    /// "00", "01", … "99".
    @inlinable
    static var digitPairs: StaticString {
        """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """
    }

    /// A literal's bytes.
    @inlinable @inline(__always)
    public mutating func add(_ text: StaticString) { append(text.utf8Start, count: text.utf8CodeUnitCount) }

    /// A string's UTF-8, as it is.
    @inlinable
    public mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { append(bytes: $0) }
    }

    @inlinable
    public mutating func append(_ bytes: [UInt8]) { bytes.withUnsafeBufferPointer { append(bytes: $0) } }

    /// The bytes written from `start` on.
    public func withBytes<R>(from start: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: base + start, count: count - start))
    }

    /// The document written.
    public func bytes() -> [UInt8] {
        let n = count, source = base
        return [UInt8](unsafeUninitializedCapacity: n) { buffer, initialized in
            if n > 0 { buffer.baseAddress!.update(from: source, count: n) }
            initialized = n
        }
    }
}

extension ByteSink where Self: ~Copyable {
    /// A literal's bytes.
    @inlinable @inline(__always)
    public mutating func append(literal text: StaticString) {
        append(bytes: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
}

extension Double {
    /// `rounded()` (to the nearest whole number, halves away from zero) without calling libm's `round`, which the
    /// renderers called for every confidence and corner: below 2^52 the value less its whole part (cut toward zero)
    /// is exact, and says which way to go; from 2^52 on every double is whole.
    @inlinable @inline(__always)
    public var roundedHalfAway: Double {
        guard abs(self) < 4_503_599_627_370_496 else { return self.rounded() }
        let whole = Double(Int64(self))
        let rest = self - whole
        if rest >= 0.5 { return whole + 1 }
        if rest <= -0.5 { return whole - 1 }
        // -0.4 rounds to -0.0, as `rounded()` has it.
        return whole == 0 ? (self.sign == .minus ? -0.0 : 0.0) : whole
    }
}
