/// Where UTF-8 text is appended, a byte or a run of bytes at a time: a byte array, or a `ByteWriter`. The writers of
/// numbers, JSON strings and XML text (`JSON.write`, `XML.escape`) append to either.
public protocol ByteSink: ~Copyable {
    mutating func append(_ byte: UInt8)
    mutating func append(bytes: UnsafeBufferPointer<UInt8>)
}

extension Array: ByteSink where Element == UInt8 {
    @inlinable
    public mutating func append(bytes: UnsafeBufferPointer<UInt8>) { append(contentsOf: bytes) }
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
