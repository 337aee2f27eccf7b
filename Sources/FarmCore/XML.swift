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
        var stack: [ArraySlice<UInt8>] = []
        var sawRoot = false
        var i = bytes.startIndex
        let n = bytes.endIndex
        func isNameByte(_ b: UInt8) -> Bool {
            b >= 0x80 || (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                || b == 0x5F || b == 0x3A || b == 0x2D || b == 0x2E
        }
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }
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
        while i < n {
            if bytes[i] != UInt8(ascii: "<") {
                let end = bytes[i..<n].firstIndex(of: UInt8(ascii: "<")) ?? n
                if stack.isEmpty {
                    // Outside the root only white space.
                    guard bytes[i..<end].allSatisfy(isSpace) else { return false }
                } else if !referencesValid(i, end) {
                    return false
                }
                i = end
                continue
            }
            let rest = bytes[i..<n]
            if rest.starts(with: Array("<!--".utf8)) {
                guard let end = find(Array("-->".utf8), from: i + 4) else { return false }
                i = end + 3
            } else if rest.starts(with: Array("<?".utf8)) {
                guard let end = find(Array("?>".utf8), from: i + 2) else { return false }
                i = end + 2
            } else if rest.starts(with: Array("<![CDATA[".utf8)) {
                guard !stack.isEmpty, let end = find(Array("]]>".utf8), from: i + 9) else { return false }
                i = end + 3
            } else if rest.starts(with: Array("<!DOCTYPE".utf8)) {
                guard stack.isEmpty, !sawRoot, let end = bytes[i..<n].firstIndex(of: UInt8(ascii: ">")) else { return false }
                i = end + 1
            } else if rest.starts(with: Array("</".utf8)) {
                var j = i + 2
                let nameStart = j
                while j < n && isNameByte(bytes[j]) { j += 1 }
                let name = bytes[nameStart..<j]
                while j < n && isSpace(bytes[j]) { j += 1 }
                guard j < n, bytes[j] == UInt8(ascii: ">"), let open = stack.popLast(), open.elementsEqual(name) else { return false }
                i = j + 1
            } else {
                var j = i + 1
                let nameStart = j
                while j < n && isNameByte(bytes[j]) { j += 1 }
                guard j > nameStart else { return false }
                let name = bytes[nameStart..<j]
                if stack.isEmpty && sawRoot { return false }   // a second root
                var names = Set<ArraySlice<UInt8>>()
                // Attributes: name = "value" or 'value'.
                while true {
                    let before = j
                    while j < n && isSpace(bytes[j]) { j += 1 }
                    guard j < n else { return false }
                    if bytes[j] == UInt8(ascii: ">") || bytes[j] == UInt8(ascii: "/") { break }
                    guard j > before else { return false }
                    let attributeStart = j
                    while j < n && isNameByte(bytes[j]) { j += 1 }
                    guard j > attributeStart, names.insert(bytes[attributeStart..<j]).inserted else { return false }
                    while j < n && isSpace(bytes[j]) { j += 1 }
                    guard j < n, bytes[j] == UInt8(ascii: "=") else { return false }
                    j += 1
                    while j < n && isSpace(bytes[j]) { j += 1 }
                    guard j < n, bytes[j] == UInt8(ascii: "\"") || bytes[j] == UInt8(ascii: "'") else { return false }
                    let quote = bytes[j]
                    guard let close = bytes[(j + 1)..<n].firstIndex(of: quote), referencesValid(j + 1, close) else { return false }
                    j = close + 1
                }
                if bytes[j] == UInt8(ascii: "/") {
                    guard j + 1 < n, bytes[j + 1] == UInt8(ascii: ">") else { return false }
                    if stack.isEmpty { sawRoot = true }
                    i = j + 2
                } else {
                    guard stack.count < maxDepth else { return false }
                    stack.append(name)
                    sawRoot = true
                    i = j + 1
                }
            }
        }
        return stack.isEmpty && sawRoot
    }
}
