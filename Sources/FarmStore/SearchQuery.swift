/// Why a search query cannot be run, said for the person who typed it.
public struct SearchQueryError: Error, Equatable, CustomStringConvertible, Sendable {
    public let reason: String

    public init(_ reason: String) { self.reason = reason }

    public var description: String { reason }
}

/// A search query, checked and turned into an FTS5 MATCH expression.
///
/// The syntax is a small, safe subset of FTS5's: words (all must occur), `"a phrase"`, `prefix*`, `AND`, `OR`,
/// `NOT` (upper case; `a NOT b` is a page with a but without b; `a -b` says the same, as web search engines take it)
/// and parentheses. Precedence as in FTS5: NOT binds
/// tightest, then AND (also implied between words), then OR. Every word and phrase is quoted in the expression, so
/// characters that mean something to FTS5 (`:`, `^`, `+`, `-`, `NEAR`, column names) are searched as text, and
/// Chinese and Japanese runs become phrases of single characters (see `SearchText`).
public struct SearchQuery: Equatable, Sendable {
    /// The parsed query.
    public indirect enum Expression: Equatable, Sendable {
        /// A word, or (quoted) a phrase; `prefix` for a trailing `*`.
        case text(String, phrase: Bool, prefix: Bool)
        case and([Expression])
        case or([Expression])
        /// Pages matching the first and not the second.
        case not(Expression, Expression)
    }

    /// Most words and phrases in one query.
    public static let maxTerms = 64
    /// Deepest nesting of parentheses (FTS5 refuses expressions deeper than 256).
    public static let maxDepth = 16

    /// The query as typed.
    public let text: String
    public let expression: Expression

    /// Parses `text`; a malformed query throws an error that names what is wrong.
    public init(_ text: String) throws(SearchQueryError) {
        self.text = text
        var parser = Parser(tokens: try Self.tokens(of: text))
        guard !parser.tokens.isEmpty else { throw SearchQueryError("the query is empty") }
        expression = try parser.parseQuery()
    }

    /// The FTS5 MATCH expression: every term quoted, every operator explicit and parenthesized.
    public var match: String { Self.render(expression) }

    /// The expression for the name index, whose Greek accents are folded (`SearchText.nameIndexed`).
    public var nameMatch: String { Self.render(expression, folding: true) }

    /// The words and phrases of the query, as typed.
    public var terms: [String] { Self.terms(of: expression) }

    /// True when the query is one word that the index holds as one token (no phrase, no operator): counting its
    /// pages is one scan of its page list, cheap at any size.
    public var isSingleToken: Bool {
        if case .text(let text, _, let prefix) = expression { return !prefix && Self.indexTokens(of: text).count == 1 }
        return false
    }

    /// The tokens FTS5 makes of `text` (approximately: without case folding): runs of letters, digits and private-use
    /// characters, each Han or kana character on its own.
    public static func indexTokens(of text: String) -> [String] {
        var tokens: [String] = []
        var current = ""
        for scalar in text.unicodeScalars {
            if SearchText.isSingleCharacterToken(scalar) {
                if !current.isEmpty { tokens.append(current) }
                tokens.append(String(scalar))
                current = ""
            } else if isTokenCharacter(scalar) || (!current.isEmpty && SearchText.isMark(scalar)) {
                current.unicodeScalars.append(scalar)
            } else if !current.isEmpty {
                tokens.append(current)
                current = ""
            }
        }
        if !current.isEmpty { tokens.append(current) }
        return tokens
    }

    /// `unicode61`'s token characters: letters, digits, private use (categories L*, N*, Co).
    static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber, .privateUse: true
        default: false
        }
    }

    // MARK: Rendering

    static func render(_ expression: Expression, folding: Bool = false) -> String {
        func render(_ part: Expression) -> String { Self.render(part, folding: folding) }
        switch expression {
        case .text(let text, _, let prefix):
            let indexed = folding ? SearchText.nameIndexed(text) : SearchText.indexed(text)
            let quoted = "\"" + indexed.split(separator: "\"", omittingEmptySubsequences: false)
                .joined(separator: "\"\"") + "\""
            return prefix ? quoted + "*" : quoted
        case .and(let parts): return "(" + parts.map(render).joined(separator: " AND ") + ")"
        case .or(let parts): return "(" + parts.map(render).joined(separator: " OR ") + ")"
        case .not(let left, let right): return "(" + render(left) + " NOT " + render(right) + ")"
        }
    }

    static func terms(of expression: Expression) -> [String] {
        switch expression {
        case .text(let text, _, _): [text]
        case .and(let parts), .or(let parts): parts.flatMap(terms)
        case .not(let left, let right): terms(of: left) + terms(of: right)
        }
    }

    // MARK: Tokens

    enum Token: Equatable {
        case word(String, prefix: Bool)
        case phrase(String, prefix: Bool)
        case and, or, not
        /// A `-` at the start of a word, phrase or group: NOT written as search engines write it.
        case exclude
        case open, close

        var shown: String {
            switch self {
            case .word(let text, let prefix): text + (prefix ? "*" : "")
            case .phrase(let text, let prefix): "\"\(text)\"" + (prefix ? "*" : "")
            case .and: "AND"
            case .or: "OR"
            case .not: "NOT"
            case .exclude: "-"
            case .open: "("
            case .close: ")"
            }
        }
    }

    static func tokens(of text: String) throws(SearchQueryError) -> [Token] {
        var tokens: [Token] = []
        let characters = Array(text)
        var index = 0
        func isWordCharacter(_ c: Character) -> Bool { !c.isWhitespace && c != "\"" && c != "(" && c != ")" }
        while index < characters.count {
            let c = characters[index]
            if c.isWhitespace {
                index += 1
            } else if c == "-", index + 1 < characters.count, !characters[index + 1].isWhitespace,
                      index == 0 || characters[index - 1].isWhitespace || characters[index - 1] == "(" {
                // `fox -dog`: the pages with fox but not dog. Inside a word (e-mail, foo-bar) a hyphen is text.
                tokens.append(.exclude)
                index += 1
            } else if c == "(" {
                tokens.append(.open)
                index += 1
            } else if c == ")" {
                tokens.append(.close)
                index += 1
            } else if c == "\"" {
                guard let end = characters[(index + 1)...].firstIndex(of: "\"") else {
                    throw SearchQueryError("unbalanced quote: the phrase \"\(String(characters[(index + 1)...]))"
                                           + " has no closing \"")
                }
                let phrase = String(characters[(index + 1)..<end])
                index = end + 1
                var prefix = false
                if index < characters.count && characters[index] == "*" {
                    prefix = true
                    index += 1
                }
                guard phrase.contains(where: { !$0.isWhitespace }) else { throw SearchQueryError("empty phrase \"\"") }
                try requireSearchable(phrase, shown: "\"\(phrase)\"", prefix: prefix)
                tokens.append(.phrase(phrase, prefix: prefix))
            } else {
                let start = index
                while index < characters.count && isWordCharacter(characters[index]) { index += 1 }
                var word = String(characters[start..<index])
                switch word {
                case "AND": tokens.append(.and)
                case "OR": tokens.append(.or)
                case "NOT": tokens.append(.not)
                default:
                    var prefix = false
                    if word.hasSuffix("*") {
                        word.removeLast()
                        prefix = true
                    }
                    if word.isEmpty {
                        throw SearchQueryError("a lone * searches for nothing: * marks a prefix at the end of a word (digit*)")
                    }
                    if word.contains("*") {
                        throw SearchQueryError("'\(word)\(prefix ? "*" : "")': * marks a prefix and goes only at the end "
                                               + "of a word (digit*)")
                    }
                    try requireSearchable(word, shown: "'\(word)'", prefix: prefix)
                    tokens.append(.word(word, prefix: prefix))
                }
            }
        }
        return tokens
    }

    /// FTS5 indexes letters, digits and private-use characters (`unicode61`'s token categories L*, N*, Co);
    /// a term made only of other characters would silently match nothing.
    static func requireSearchable(_ term: String, shown: String, prefix: Bool) throws(SearchQueryError) {
        let tokens = indexTokens(of: term)
        guard let last = tokens.last else {
            throw SearchQueryError("\(shown) has no letters or digits to search for (punctuation is not indexed)")
        }
        // FTS5 gathers every word that starts with a prefix before it returns anything; the index keeps lists for
        // prefixes of 2 and 3 characters, and one-letter prefixes (most words of most pages) are refused.
        if prefix, last.count < 2, !last.unicodeScalars.contains(where: SearchText.isSingleCharacterToken) {
            throw SearchQueryError("\(last)* is too short a prefix: give at least 2 letters or digits before *")
        }
    }

    // MARK: Parsing

    /// Recursive descent: query = or; or = and (OR and)*; and = not ([AND] not)*; not = primary (NOT primary)*;
    /// primary = word | phrase | ( or ).
    struct Parser {
        let tokens: [Token]
        var position = 0
        var depth = 0
        var termCount = 0

        init(tokens: [Token]) { self.tokens = tokens }

        var next: Token? { position < tokens.count ? tokens[position] : nil }

        mutating func parseQuery() throws(SearchQueryError) -> Expression {
            let expression = try parseOr()
            if let next {
                // Only a stray ')' can stop the top level early.
                throw SearchQueryError(next == .close ? "unbalanced parenthesis: ')' without '('"
                                                      : "unexpected \(next.shown)")
            }
            return expression
        }

        mutating func parseOr() throws(SearchQueryError) -> Expression {
            var parts = [try parseAnd()]
            while next == .or {
                position += 1
                parts.append(try parseAnd(after: "OR"))
            }
            return parts.count == 1 ? parts[0] : .or(parts)
        }

        mutating func parseAnd(after operator: String? = nil) throws(SearchQueryError) -> Expression {
            var parts = [try parseNot(after: `operator`)]
            while let token = next {
                switch token {
                case .and:
                    position += 1
                    parts.append(try parseNot(after: "AND"))
                case .word, .phrase, .open:
                    parts.append(try parseNot())
                default:
                    return parts.count == 1 ? parts[0] : .and(parts)
                }
            }
            return parts.count == 1 ? parts[0] : .and(parts)
        }

        mutating func parseNot(after operator: String? = nil) throws(SearchQueryError) -> Expression {
            var left = try parsePrimary(after: `operator`)
            while let token = next, token == .not || token == .exclude {
                position += 1
                left = .not(left, try parsePrimary(after: token.shown))
            }
            return left
        }

        mutating func parsePrimary(after operator: String?) throws(SearchQueryError) -> Expression {
            guard let token = next else {
                if let `operator` { throw SearchQueryError("\(`operator`) needs a word after it") }
                throw SearchQueryError(depth > 0 ? "unbalanced parenthesis: '(' without ')'" : "the query ends too early")
            }
            switch token {
            case .word(let text, let prefix), .phrase(let text, let prefix):
                position += 1
                termCount += 1
                if termCount > SearchQuery.maxTerms {
                    throw SearchQueryError("too many words: at most \(SearchQuery.maxTerms) words and phrases")
                }
                if case .phrase = token { return .text(text, phrase: true, prefix: prefix) }
                return .text(text, phrase: false, prefix: prefix)
            case .open:
                position += 1
                if next == .close { throw SearchQueryError("empty parentheses ()") }
                depth += 1
                if depth > SearchQuery.maxDepth {
                    throw SearchQueryError("parentheses nested too deeply (at most \(SearchQuery.maxDepth))")
                }
                let inner = try parseOr()
                guard next == .close else { throw SearchQueryError("unbalanced parenthesis: '(' without ')'") }
                position += 1
                depth -= 1
                return inner
            case .close:
                if let `operator` { throw SearchQueryError("\(`operator`) needs a word after it, not ')'") }
                throw SearchQueryError("unbalanced parenthesis: ')' without '('")
            case .and, .or, .not, .exclude:
                if let `operator` { throw SearchQueryError("\(`operator`) cannot be followed by \(token.shown)") }
                if token == .exclude {
                    throw SearchQueryError("a leading - leaves pages out: put a word to find before it ('fox -dog' finds "
                                           + "pages with fox but without dog)")
                }
                if token == .not {
                    throw SearchQueryError("NOT needs a word before it: 'a NOT b' finds pages with a but not b")
                }
                throw SearchQueryError("\(token.shown) needs a word before it")
            }
        }
    }
}
