/// A bounded multipart/form-data parser (RFC 7578) over a body already held in memory (and bounded by the
/// server's body limit): parts are split at the boundary, each part's head read for its name and file name.
enum Multipart {
    struct Part {
        let name: String?
        let filename: String?
        let body: [UInt8]
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The boundary of a `multipart/form-data; boundary=…` content type.
    static func boundary(_ contentType: String) -> String? {
        let parts = contentType.split(separator: ";").map { $0.trimmingCharacters() }
        guard parts.first?.lowercased() == "multipart/form-data" else { return nil }
        for part in parts.dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2, pair[0].lowercased() == "boundary" else { continue }
            var value = pair[1]
            if value.hasPrefix("\"") && value.hasSuffix("\"") && value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            // RFC 2046: 1 to 70 characters.
            return (1...70).contains(value.utf8.count) ? value : nil
        }
        return nil
    }

    static func parse(_ body: [UInt8], boundary: String, maxParts: Int) throws -> [Part] {
        let delimiter = Array(("--" + boundary).utf8)
        var positions: [Int] = []
        var index = 0
        // Delimiters start the body or follow a CRLF.
        while let found = find(delimiter, in: body, from: index) {
            if found == 0 || (found >= 2 && body[found - 2] == 13 && body[found - 1] == 10) { positions.append(found) }
            index = found + delimiter.count
        }
        guard let first = positions.first else { throw Failure(description: "no multipart boundary in the body") }
        _ = first
        var parts: [Part] = []
        for (number, start) in positions.enumerated() {
            let afterDelimiter = start + delimiter.count
            // "--" after the delimiter closes the body.
            if afterDelimiter + 1 < body.count && body[afterDelimiter] == 45 && body[afterDelimiter + 1] == 45 { break }
            guard number + 1 < positions.count else { throw Failure(description: "the multipart body is not closed") }
            let end = positions[number + 1] - 2   // the CRLF before the next delimiter
            guard afterDelimiter + 2 <= end, body[afterDelimiter] == 13, body[afterDelimiter + 1] == 10 else {
                throw Failure(description: "a multipart delimiter is not followed by a line break")
            }
            let content = Array(body[(afterDelimiter + 2)..<end])
            guard let headEnd = find([13, 10, 13, 10], in: content, from: 0) else {
                throw Failure(description: "a multipart part has no head")
            }
            guard headEnd <= 8192 else { throw Failure(description: "a multipart part's head is too long") }
            let head = String(decoding: content[..<headEnd], as: UTF8.self)
            var name: String?
            var filename: String?
            for line in head.split(separator: "\r\n") {
                let field = line.split(separator: ":", maxSplits: 1).map(String.init)
                guard field.count == 2, field[0].lowercased() == "content-disposition" else { continue }
                name = parameter("name", in: field[1])
                filename = parameter("filename", in: field[1])
            }
            parts.append(Part(name: name, filename: filename, body: Array(content[(headEnd + 4)...])))
            guard parts.count <= maxParts else { throw Failure(description: "more than \(maxParts) parts in one upload") }
        }
        return parts
    }

    /// A parameter of a Content-Disposition value (`name="x"`), quotes removed.
    static func parameter(_ key: String, in value: String) -> String? {
        for item in value.split(separator: ";").dropFirst() {
            let pair = item.trimmingCharacters().split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2, pair[0].lowercased() == key else { continue }
            var text = pair[1]
            if text.hasPrefix("\"") && text.hasSuffix("\"") && text.count >= 2 { text = String(text.dropFirst().dropLast()) }
            return text.replacing("\\\"", with: "\"")
        }
        return nil
    }

    /// A file name safe in one folder: the last component of what the client sent (either slash), only letters,
    /// digits, '.', '-' and '_', no leading dot, at most 100 characters; "upload" if nothing is left.
    static func safeName(_ sent: String) -> String {
        let last = sent.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        var name = String(last.unicodeScalars.map { scalar -> Character in
            let ok = (scalar.value < 128 && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)))
                || scalar == "." || scalar == "-" || scalar == "_"
            return ok ? Character(scalar) : "_"
        })
        while name.hasPrefix(".") { name.removeFirst() }
        if name.count > 100 { name = String(name.suffix(100)) }
        return name.isEmpty ? "upload" : name
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count, start <= haystack.count - needle.count else { return nil }
        let first = needle[0]
        var index = start
        let last = haystack.count - needle.count
        while index <= last {
            if haystack[index] == first {
                var match = true
                for offset in 1..<needle.count where haystack[index + offset] != needle[offset] {
                    match = false
                    break
                }
                if match { return index }
            }
            index += 1
        }
        return nil
    }
}

extension Substring {
    func trimmingCharacters() -> String { String(self).trimmingSpaces }
}

extension String {
    func trimmingCharacters() -> String { trimmingSpaces }
}
