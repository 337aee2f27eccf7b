/// The functions of one Swift source file and the lines each body spans, read with a small lexer: comments, string
/// literals (multi-line, raw, with interpolations) and `#/…/#` regex literals are skipped, so their braces never
/// count. What it does not know: bare `/…/` regex literals (none in Sources/; write them as `#/…/#`).
struct SwiftFunctions {
    /// One function, initializer, deinitializer or subscript with a body.
    struct Body: Equatable {
        /// `func`'s name, or `init`, `deinit`, `subscript`.
        let name: String
        /// The line of the body's opening brace (1-based).
        let line: Int
        /// Lines from the opening brace to the closing one, both included.
        let lines: Int
    }

    private enum Token {
        case word(String)
        case symbol(UInt8)
    }

    /// Where the lexer is: code (at the top, or inside a string's `\(…)` with the parentheses open there), or a
    /// string literal.
    private enum Context {
        case code(interpolationDepth: Int?)
        case string(multiline: Bool, hashes: Int)
    }

    /// Every body in `source`, in the order they open.
    static func bodies(in source: String) -> [Body] {
        let tokens = lex(Array(source.utf8))
        var found: [Body] = []
        let declarations: Set<String> = ["func", "init", "deinit", "subscript", "var", "let", "case", "struct", "class", "enum",
                                         "protocol", "typealias", "associatedtype", "extension", "actor", "import"]
        for (index, (token, _)) in tokens.enumerated() {
            guard case .word(let keyword) = token, ["func", "init", "deinit", "subscript"].contains(keyword) else { continue }
            // `.init(…)`, `self.init(…)`: a call, not a declaration.
            if index > 0, case .symbol(UInt8(ascii: ".")) = tokens[index - 1].token { continue }
            var name = keyword
            if keyword == "func", index + 1 < tokens.count, case .word(let word) = tokens[index + 1].token { name = word }
            var depth = 0
            var cursor = index + 1
            scan: while cursor < tokens.count {
                switch tokens[cursor].token {
                case .symbol(UInt8(ascii: "(")), .symbol(UInt8(ascii: "[")): depth += 1
                case .symbol(UInt8(ascii: ")")), .symbol(UInt8(ascii: "]")): depth -= 1
                case .symbol(UInt8(ascii: "{")) where depth == 0:
                    if let close = matchingBrace(tokens, from: cursor) {
                        let open = tokens[cursor].line
                        found.append(Body(name: name, line: open, lines: tokens[close].line - open + 1))
                    }
                    break scan
                case .symbol(UInt8(ascii: "}")) where depth == 0, .symbol(UInt8(ascii: ";")) where depth == 0:
                    break scan   // a requirement without a body
                case .word(let word) where depth == 0 && cursor > index + 1 && declarations.contains(word):
                    break scan
                default: break
                }
                cursor += 1
            }
        }
        return found
    }

    private static func matchingBrace(_ tokens: [(token: Token, line: Int)], from open: Int) -> Int? {
        var depth = 0
        for index in open..<tokens.count {
            if case .symbol(UInt8(ascii: "{")) = tokens[index].token { depth += 1 }
            if case .symbol(UInt8(ascii: "}")) = tokens[index].token {
                depth -= 1
                if depth == 0 { return index }
            }
        }
        return nil
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_") || byte >= 0x80
    }

    /// The words and the symbols `{ } ( ) [ ] ; .` of the code, each with its line; comments and literals left out.
    private static func lex(_ text: [UInt8]) -> [(token: Token, line: Int)] {
        var tokens: [(token: Token, line: Int)] = []
        var stack: [Context] = [.code(interpolationDepth: nil)]
        var line = 1
        var index = 0
        func byte(_ at: Int) -> UInt8 { at < text.count ? text[at] : 0 }
        func hashes(from at: Int) -> Int {
            var end = at
            while byte(end) == UInt8(ascii: "#") { end += 1 }
            return end - at
        }
        while index < text.count {
            let current = text[index]
            switch stack[stack.count - 1] {
            case .string(let multiline, let count):
                if current == UInt8(ascii: "\n") { line += 1 }
                if current == UInt8(ascii: "\\"), hashes(from: index + 1) >= count {
                    let after = index + 1 + count
                    if byte(after) == UInt8(ascii: "(") {
                        stack.append(.code(interpolationDepth: 1))
                        index = after + 1
                        continue
                    }
                    // An escape: the next character is taken as it is (an escaped quote does not end the string).
                    if byte(after) == UInt8(ascii: "\n") { line += 1 }
                    index = after + 1
                    continue
                }
                if current == UInt8(ascii: "\"") {
                    let quotes = multiline ? 3 : 1
                    if (0..<quotes).allSatisfy({ byte(index + $0) == UInt8(ascii: "\"") }), hashes(from: index + quotes) >= count {
                        stack.removeLast()
                        index += quotes + count
                        continue
                    }
                }
                index += 1
            case .code(let interpolationDepth):
                if current == UInt8(ascii: "\n") {
                    line += 1
                    index += 1
                } else if current == UInt8(ascii: "/"), byte(index + 1) == UInt8(ascii: "/") {
                    while index < text.count, text[index] != UInt8(ascii: "\n") { index += 1 }
                } else if current == UInt8(ascii: "/"), byte(index + 1) == UInt8(ascii: "*") {
                    var depth = 0
                    repeat {
                        if byte(index) == UInt8(ascii: "/"), byte(index + 1) == UInt8(ascii: "*") {
                            depth += 1
                            index += 2
                        } else if byte(index) == UInt8(ascii: "*"), byte(index + 1) == UInt8(ascii: "/") {
                            depth -= 1
                            index += 2
                        } else {
                            if byte(index) == UInt8(ascii: "\n") { line += 1 }
                            index += 1
                        }
                    } while depth > 0 && index < text.count
                } else if current == UInt8(ascii: "\"") || current == UInt8(ascii: "#") {
                    let count = hashes(from: index)
                    let after = index + count
                    if byte(after) == UInt8(ascii: "\"") {
                        let multiline = byte(after + 1) == UInt8(ascii: "\"") && byte(after + 2) == UInt8(ascii: "\"")
                        stack.append(.string(multiline: multiline, hashes: count))
                        index = after + (multiline ? 3 : 1)
                    } else if count > 0, byte(after) == UInt8(ascii: "/") {
                        // An extended regex literal `#/…/#`: to the slash followed by as many hashes.
                        index = after + 1
                        while index < text.count, !(text[index] == UInt8(ascii: "/") && hashes(from: index + 1) >= count) {
                            if text[index] == UInt8(ascii: "\n") { line += 1 }
                            index += 1
                        }
                        index += 1 + count
                    } else {
                        index += max(count, 1)   // `#if`, `#available`: the word after it is read next
                    }
                } else if current == UInt8(ascii: "`") {
                    let start = index + 1
                    var end = start
                    while end < text.count, text[end] != UInt8(ascii: "`"), text[end] != UInt8(ascii: "\n") { end += 1 }
                    tokens.append((.word(String(decoding: text[start..<end], as: UTF8.self)), line))
                    index = end + 1
                } else if isWordByte(current) {
                    let start = index
                    while index < text.count, isWordByte(text[index]) { index += 1 }
                    tokens.append((.word(String(decoding: text[start..<index], as: UTF8.self)), line))
                } else {
                    if let depth = interpolationDepth {
                        if current == UInt8(ascii: "(") {
                            stack[stack.count - 1] = .code(interpolationDepth: depth + 1)
                        } else if current == UInt8(ascii: ")") {
                            if depth == 1 {
                                stack.removeLast()   // back in the string
                                index += 1
                                continue
                            }
                            stack[stack.count - 1] = .code(interpolationDepth: depth - 1)
                        }
                    }
                    if [UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "["),
                        UInt8(ascii: "]"), UInt8(ascii: ";"), UInt8(ascii: ".")].contains(current) {
                        tokens.append((.symbol(current), line))
                    }
                    index += 1
                }
            }
        }
        return tokens
    }
}
