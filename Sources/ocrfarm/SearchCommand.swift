import FarmCore
import FarmRuntime
import FarmStore

/// `ocrfarm search`: pages whose text matches a query, from the store's full-text index.
struct SearchCommand: Command {
    static let name = "search"
    static let abstract = "Find the pages whose text matches a query: words, \"phrases\", prefix*, AND, OR, NOT."
    static let arguments = "QUERY"
    static let options: [OptionSpec] = [
        StoreOption.spec,
        ReportDocuments.spec,
        OptionSpec("--limit", value: "N", "Show at most N pages (default: 20)."),
        OptionSpec("--json", "Print JSON with stable keys instead of text."),
    ]
    static let discussion = """
    A query is words (a page must have all of them), "a phrase", prefix* (digit* finds digit, digits, digital; at
    least 2 letters before the *), and the operators AND, OR and NOT in capitals, with parentheses: NOT binds
    tightest, then AND, then OR, so 'a b OR c' is '(a AND b) OR c' and 'a NOT b' is a page with a but without b;
    'a -b' is the same (a - that starts a word, phrase or group; inside a word, as in e-mail, it is text).
    Case and accents are ignored (resume finds résumé; in document names Greek accents too: αθηνα finds Αθήνα).
    Chinese and Japanese are found by any run of characters
    (君子, 论语), whatever the word boundaries. Other punctuation is not searched for: foo-bar is the phrase
    "foo bar". Give the query as one argument in the shell's quotes (several arguments are joined with spaces);
    a query that starts with - goes after --.

    Hits show the document, the page number, the source file (when it is not the document itself; #N for a later
    page of a multi-page file) and the text around the matches, marked [like this] (bold on a terminal); then the
    documents whose names match the query (accents folded: muller finds Müller), unless --document chose. Up to
    20,000 matching pages are ranked by relevance (bm25); when more match, ranking them all would take seconds at
    a million pages, so the first pages in submission order are shown instead, and the output says so.

    JSON keys: query, total (pages that match; null when more than 20,000 match a query of more than one word:
    those are not counted), order ("relevance" or "page"), hits[{document, document_id, page, page_id, source,
    source_page (page within the file, from 1), snippet (matches in [ ]), rank (bm25 score, lower is better;
    null in page order)}], documents_named[{document, document_id, pages}].

    Examples:
      ocrfarm search 'invoice 2023'
      ocrfarm search '"net amount" AND (EUR OR USD) NOT draft' --document ledger.pdf --limit 5
      ocrfarm search 'digit*' --json
      ocrfarm search 君子

    Exit status: 0 pages or document names found; 1 nothing matches (like grep); 64 a malformed query (what is wrong is said);
    66 no store, or no document of that name.
    """

    let storePath: String
    let query: SearchQuery
    let documentNames: [String]
    let limit: Int
    let json: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard !arguments.positionals.isEmpty else { throw UsageError(message: "no query given") }
        let text = arguments.positionals.joined(separator: " ")
        do {
            query = try SearchQuery(text)
        } catch {
            throw UsageError(message: "bad query '\(text)': \(error.reason)")
        }
        storePath = StoreOption.path(arguments)
        documentNames = arguments.strings("--document")
        limit = try arguments.int("--limit", range: 1...10_000) ?? 20
        json = arguments.flag("--json")
    }

    func run() throws -> ExitStatus {
        var store = try ReportDocuments.open(storePath)
        if try !store.hasSearchIndex {
            // A store from before the search index: opening it for writing adds the index and fills it, once.
            do {
                store = try Store(path: storePath)
            } catch let error as StoreError {
                throw CommandFailure(.ioError, "\(storePath) has no search index yet and cannot be given one: \(error.message)")
            }
        }
        let documents = try ReportDocuments.selected(documentNames, in: store)
        let results = try store.search(query, documents: documents.map { $0.map(\.id) }, limit: limit)
        // Documents named like the query (`search muller` for "Brief an Müller.tif") or whose catalogue fields match it,
        // unless --document chose.
        let named = documents == nil ? try store.documents(matchingName: query, limit: 10) : []
        if json {
            Console.out(JSON.object([
                ("query", JSON(query.text)),
                ("total", JSON(results.total)),
                ("order", JSON(results.order.rawValue)),
                ("hits", .array(results.hits.map { hit in
                    .object([
                        ("document", JSON(hit.documentName)), ("document_id", JSON(Int(hit.document.rawValue))),
                        ("page", JSON(hit.number)), ("page_id", JSON(Int(hit.page.rawValue))),
                        ("source", JSON(hit.source.description)), ("source_page", JSON(hit.sourceIndex + 1)),
                        ("snippet", JSON(Self.marked(hit.snippet, open: "[", close: "]"))),
                        ("rank", hit.score.map { JSON($0) } ?? .null),
                    ])
                })),
                ("documents_named", .array(named.map { document in
                    .object([("document", JSON(document.name)), ("document_id", JSON(Int(document.id.rawValue))),
                             ("pages", JSON(document.pageCount))])
                })),
            ]).pretty + "\n")
            return results.hits.isEmpty && named.isEmpty ? .failure : .success
        }
        var namedText = ""
        if !named.isEmpty {
            namedText = "documents named or catalogued like it (title, creator, shelfmark…):\n"
            for document in named {
                namedText += "  \(Printable.text(document.name))  (\(document.pageCount) page\(document.pageCount == 1 ? "" : "s"))\n"
            }
        }
        guard !results.hits.isEmpty else {
            Console.out("no pages match \(query.text)\n" + namedText)
            return named.isEmpty ? .failure : .success
        }
        let bold = Console.outputIsTerminal
        let shown = results.hits.count
        var text: String
        switch (results.order, results.total) {
        case (.relevance, let total?):
            text = "\(total) page\(total == 1 ? "" : "s") match\(total == 1 ? "es" : "")"
            text += shown < total ? "; the best \(shown):\n" : ", best first:\n"
        case (.page, let total?):
            text = "ranked by page order: the word is in \(total) pages (more than \(Store.rankedSearchLimit) are not "
            text += "ranked); the first \(shown):\n"
        case (_, nil):
            text = "ranked by page order: the words are in more than \(Store.rankedSearchLimit) pages (too many to rank); "
            text += "the first \(shown):\n"
        }
        for hit in results.hits {
            // The source file when it is not the document itself (a folder's page), #N for a later page of a file.
            let path = hit.source.description
            let source = path == hit.documentName && hit.sourceIndex == 0 ? ""
                : "  (" + path + (hit.sourceIndex > 0 ? "#\(hit.sourceIndex + 1)" : "") + ")"
            text += "\(hit.documentName)  page \(hit.number)\(source)\n"
            text += "    " + Self.marked(hit.snippet, open: bold ? "\u{1B}[1m" : "[", close: bold ? "\u{1B}[0m" : "]") + "\n"
        }
        Console.out(text + namedText)
        return .success
    }

    /// The snippet with its match marks replaced.
    static func marked(_ snippet: String, open: String, close: String) -> String {
        var text = ""
        for character in snippet {
            switch character {
            case SearchHit.markStart: text += open
            case SearchHit.markEnd: text += close
            default: text.append(character)
            }
        }
        return text
    }
}
