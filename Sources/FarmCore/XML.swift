/// XML text escaping.
public enum XML {
    public static func escaped(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        escape(text, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `text` escaped (`escaped`), appended to `out` as UTF-8: the renderers write every word this way, so a text
    /// with nothing to escape is copied whole and nothing is allocated.
    @inlinable
    public static func escape<Sink: ByteSink & ~Copyable>(_ text: String, into out: inout Sink) {
        var text = text
        text.withUTF8 { bytes in
            let n = bytes.count
            var run = 0, i = 0
            while i < n {
                let byte = bytes[i]
                let replacement: StaticString?
                var skip = 1
                switch byte {
                case UInt8(ascii: "&"): replacement = "&amp;"
                case UInt8(ascii: "<"): replacement = "&lt;"
                case UInt8(ascii: ">"): replacement = "&gt;"
                case UInt8(ascii: "\""): replacement = "&quot;"
                case UInt8(ascii: "'"): replacement = "&apos;"
                case 0x09, 0x0A, 0x0D: i += 1; continue
                case 0..<0x20: replacement = ""
                // Characters XML 1.0 forbids are dropped rather than producing an unparseable document: below
                // U+0020 but tab and line ends, and U+FFFE and U+FFFF (EF BF BE, EF BF BF; a String holds no
                // surrogates).
                case 0xEF where i + 2 < n && bytes[i + 1] == 0xBF && bytes[i + 2] >= 0xBE: replacement = ""; skip = 3
                default: i += 1; continue
                }
                if run < i { out.append(bytes: UnsafeBufferPointer(rebasing: bytes[run..<i])) }
                if let replacement { out.append(literal: replacement) }
                i += skip
                run = i
            }
            if run < n { out.append(bytes: UnsafeBufferPointer(rebasing: bytes[run..<n])) }
        }
    }
}

extension XML {
    /// Whether `bytes` are a well-formed XML document, as far as a store must know before it keeps one: UTF-8, one
    /// root element, tags nested and closed, attributes quoted, entity references known or numeric, no text
    /// outside the root but white space, comments, processing instructions and one DOCTYPE. Not a validator (no
    /// schema, no DTD); `maxDepth` bounds the nesting a hostile document can ask for.
    public static func isWellFormed(_ bytes: [UInt8], maxDepth: Int = 256) -> Bool {
        guard String(validating: bytes, as: UTF8.self) != nil else { return false }
        var check = WellFormedness(bytes: bytes, maxDepth: maxDepth)
        return check.run()
    }
}

/// One pass of `XML.isWellFormed` over a document: the elements open and whether the root was seen. Each step
/// takes the index where its construct starts and returns the index after it, or nil when it is not well formed.
private struct WellFormedness {
    let bytes: [UInt8]
    let maxDepth: Int
    var stack: [ArraySlice<UInt8>] = []
    var sawRoot = false
    var n: Int { bytes.endIndex }

    init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    mutating func run() -> Bool {
        var i = bytes.startIndex
        while i < n {
            guard let next = bytes[i] == UInt8(ascii: "<") ? markup(at: i) : text(at: i) else { return false }
            i = next
        }
        return stack.isEmpty && sawRoot
    }

    /// Text up to the next `<`: outside the root only white space, inside it known references.
    func text(at i: Int) -> Int? {
        let end = bytes[i..<n].firstIndex(of: UInt8(ascii: "<")) ?? n
        if stack.isEmpty {
            // Outside the root only white space.
            guard bytes[i..<end].allSatisfy(Self.isSpace) else { return nil }
        } else if !referencesValid(i, end) {
            return nil
        }
        return end
    }

    /// A comment, processing instruction, CDATA section, DOCTYPE, closing tag or element starting at `i`.
    mutating func markup(at i: Int) -> Int? {
        let rest = bytes[i..<n]
        if rest.starts(with: Array("<!--".utf8)) {
            return find(Array("-->".utf8), from: i + 4).map { $0 + 3 }
        } else if rest.starts(with: Array("<?".utf8)) {
            return find(Array("?>".utf8), from: i + 2).map { $0 + 2 }
        } else if rest.starts(with: Array("<![CDATA[".utf8)) {
            guard !stack.isEmpty, let end = find(Array("]]>".utf8), from: i + 9) else { return nil }
            return end + 3
        } else if rest.starts(with: Array("<!DOCTYPE".utf8)) {
            guard stack.isEmpty, !sawRoot, let end = bytes[i..<n].firstIndex(of: UInt8(ascii: ">")) else { return nil }
            return end + 1
        } else if rest.starts(with: Array("</".utf8)) {
            return closingTag(at: i)
        }
        return element(at: i)
    }

    /// `</name>`, closing the innermost open element.
    mutating func closingTag(at i: Int) -> Int? {
        var j = i + 2
        let nameStart = j
        while j < n && Self.isNameByte(bytes[j]) { j += 1 }
        let name = bytes[nameStart..<j]
        while j < n && Self.isSpace(bytes[j]) { j += 1 }
        guard j < n, bytes[j] == UInt8(ascii: ">"), let open = stack.popLast(), open.elementsEqual(name) else { return nil }
        return j + 1
    }

    /// A start tag or an empty-element tag.
    mutating func element(at i: Int) -> Int? {
        var j = i + 1
        let nameStart = j
        while j < n && Self.isNameByte(bytes[j]) { j += 1 }
        guard j > nameStart else { return nil }
        let name = bytes[nameStart..<j]
        if stack.isEmpty && sawRoot { return nil }   // a second root
        guard let end = attributes(from: j) else { return nil }
        j = end
        if bytes[j] == UInt8(ascii: "/") {
            guard j + 1 < n, bytes[j + 1] == UInt8(ascii: ">") else { return nil }
            if stack.isEmpty { sawRoot = true }
            return j + 2
        }
        guard stack.count < maxDepth else { return nil }
        stack.append(name)
        sawRoot = true
        return j + 1
    }

    /// Attributes after an element's name, `name = "value"` or `'value'`, each name once: the index of the `>`
    /// or `/` that ends them.
    func attributes(from start: Int) -> Int? {
        var j = start
        var names = Set<ArraySlice<UInt8>>()
        while true {
            let before = j
            while j < n && Self.isSpace(bytes[j]) { j += 1 }
            guard j < n else { return nil }
            if bytes[j] == UInt8(ascii: ">") || bytes[j] == UInt8(ascii: "/") { return j }
            guard j > before else { return nil }
            let attributeStart = j
            while j < n && Self.isNameByte(bytes[j]) { j += 1 }
            guard j > attributeStart, names.insert(bytes[attributeStart..<j]).inserted else { return nil }
            while j < n && Self.isSpace(bytes[j]) { j += 1 }
            guard j < n, bytes[j] == UInt8(ascii: "=") else { return nil }
            j += 1
            while j < n && Self.isSpace(bytes[j]) { j += 1 }
            guard j < n, bytes[j] == UInt8(ascii: "\"") || bytes[j] == UInt8(ascii: "'") else { return nil }
            let quote = bytes[j]
            guard let close = bytes[(j + 1)..<n].firstIndex(of: quote), referencesValid(j + 1, close) else { return nil }
            j = close + 1
        }
    }

    static func isNameByte(_ b: UInt8) -> Bool {
        b >= 0x80 || (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
            || b == 0x5F || b == 0x3A || b == 0x2D || b == 0x2E
    }

    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }

    func find(_ pattern: [UInt8], from start: Int) -> Int? {
        var j = start
        while j + pattern.count <= n {
            if bytes[j] == pattern[0] && bytes[j..<j + pattern.count].elementsEqual(pattern) { return j }
            j += 1
        }
        return nil
    }

    /// Checks `&…;` references in text or an attribute value between `start` and `end`.
    func referencesValid(_ start: Int, _ end: Int) -> Bool {
        var j = start
        while j < end {
            if bytes[j] == UInt8(ascii: "<") { return false }
            if bytes[j] == UInt8(ascii: "&") {
                guard let semicolon = bytes[j..<end].firstIndex(of: UInt8(ascii: ";")) else { return false }
                let name = String(decoding: bytes[(j + 1)..<semicolon], as: UTF8.self)
                let known = ["lt", "gt", "amp", "quot", "apos"].contains(name)
                let numeric = name.hasPrefix("#x") ? name.dropFirst(2).allSatisfy(\.isHexDigit) && name.count > 2
                    : name.hasPrefix("#") && name.count > 1 && name.dropFirst().allSatisfy(\.isNumber)
                guard known || numeric else { return false }
                j = semicolon
            }
            j += 1
        }
        return true
    }
}
