import FarmCore
import FarmStore

/// Content Search API 2.0: the store's full-text index finds the document's pages, and the words of each page
/// that make up a term of the query give the hits, one annotation per run of matching words, on their boxes.
enum ContentSearch {
    /// Pages searched for words, best first.
    static let maxPages = 200
    /// Hits answered in all.
    static let maxHits = 1_000

    /// A run of words of one page that matches one term of the query.
    struct Hit: Sendable, Equatable {
        let page: PageID
        let text: String
        let box: Rect
    }

    /// The terms a hit may show: those of the query that a page must contain (not the excluded side of NOT), each as
    /// the index's tokens, lowercased, with whether its last token is a prefix.
    static func wanted(_ expression: SearchQuery.Expression) -> [(tokens: [String], prefix: Bool)] {
        switch expression {
        case .text(let text, _, let prefix):
            let tokens = SearchQuery.indexTokens(of: text).map { $0.lowercased() }
            return tokens.isEmpty ? [] : [(tokens, prefix)]
        case .and(let parts), .or(let parts): return parts.flatMap(wanted)
        case .not(let kept, _): return wanted(kept)
        }
    }

    /// The runs of `text`'s words that match a term.
    static func hits(in text: CanvasText, page: PageID, terms: [(tokens: [String], prefix: Bool)]) -> [Hit] {
        // The page's tokens in reading order, each with the word it came from.
        var tokens: [(token: String, word: CanvasText.Word)] = []
        for line in text.lines {
            for word in line.words {
                for token in SearchQuery.indexTokens(of: word.text) { tokens.append((token.lowercased(), word)) }
            }
        }
        var hits: [Hit] = []
        for start in tokens.indices {
            for term in terms where start + term.tokens.count <= tokens.count {
                let matched = term.tokens.indices.allSatisfy { k in
                    let token = tokens[start + k].token
                    return term.prefix && k == term.tokens.count - 1 ? token.hasPrefix(term.tokens[k]) : token == term.tokens[k]
                }
                guard matched else { continue }
                var words: [CanvasText.Word] = []
                for k in 0..<term.tokens.count {
                    let word = tokens[start + k].word
                    if words.last.map({ $0.box != word.box || $0.text != word.text }) ?? true { words.append(word) }
                }
                let box = words.dropFirst().reduce(words[0].box) { $0.union($1.box) }
                let hit = Hit(page: page, text: Scripts.join(words.map(\.text)), box: box)
                if hits.last != hit { hits.append(hit) }
            }
        }
        return hits
    }

    /// The search response: hits as `highlighting` annotations on their canvases.
    static func response(id: String, hits: [Hit], document: DocumentID, links: IIIFLinks) -> JSON {
        let items: [JSON] = hits.enumerated().map { index, hit in
            .object([
                ("id", JSON("\(links.search(document))/hit/\(index + 1)")),
                ("type", "Annotation"),
                ("motivation", "highlighting"),
                ("body", .object([("type", "TextualBody"), ("value", JSON(hit.text)), ("format", "text/plain")])),
                ("target", JSON(Presentation.target(links.canvas(document, hit.page), hit.box))),
            ])
        }
        return .object([
            ("@context", JSON(Presentation.searchContext)),
            ("id", JSON(id)),
            ("type", "AnnotationPage"),
            ("items", .array(items)),
        ])
    }

    /// `text` percent-encoded for a query value (unreserved characters as they are).
    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF")
                out += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 15)])
            }
        }
        return out
    }
}
