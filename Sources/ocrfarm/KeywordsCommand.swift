import FarmCore
import FarmRuntime
import FarmStore

/// `ocrfarm keywords`: each document's keywords, from its read pages.
struct KeywordsCommand: Command {
    static let name = "keywords"
    static let abstract = "List each document's keywords: its pages' keywords merged, on most pages first."
    static let arguments = ""
    static let options: [OptionSpec] = [
        StoreOption.spec,
        ReportDocuments.spec,
        OptionSpec("--limit", value: "N", "At most N keywords per document (default: 20; 0 for all)."),
        OptionSpec("--json", "Print JSON with stable keys instead of text."),
    ]
    static let discussion = """
    The workers find each page's keywords when they read it: its words without stop words, numbers,
    punctuation and one-character words, Chinese and Japanese split into dictionary words. Here they are merged
    over the pages of each document and ranked by the number of pages they are on, then by first appearance; a
    keyword on more than one page is followed by that number, as "ledger (12)".
    Every document is listed, one line each, in submission order; a document none of whose pages is read yet is
    listed with no keywords ("no pages read yet"), so the list accounts for every document.

    JSON keys: documents[{document, document_id, pages, pages_done, keywords[{keyword, pages}]}].

    Examples:
      ocrfarm keywords
      ocrfarm keywords --document ledger.pdf --limit 50
      ocrfarm keywords --json --limit 0

    Exit status: 0; 66 no store, or no document of that name.
    """

    let storePath: String
    let documentNames: [String]
    let limit: Int
    let json: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard arguments.positionals.isEmpty else {
            throw UsageError(message: "keywords takes no arguments (--document NAME chooses documents)")
        }
        storePath = StoreOption.path(arguments)
        documentNames = arguments.strings("--document")
        limit = try arguments.int("--limit", range: 0...100_000) ?? 20
        json = arguments.flag("--json")
    }

    func run() throws -> ExitStatus {
        let store = try ReportDocuments.open(storePath)
        let documents = try store.read {
            let records = try ReportDocuments.selected(documentNames, in: store) ?? store.documentRecords()
            return try records.map { try store.keywords(of: $0) }
        }
        func shown(_ document: DocumentKeywords) -> ArraySlice<DocumentKeywords.Keyword> {
            limit == 0 ? document.keywords[...] : document.keywords.prefix(limit)
        }
        if json {
            Console.out(JSON.object([
                ("documents", .array(documents.map { document in
                    .object([
                        ("document", JSON(document.document.name)), ("document_id", JSON(Int(document.document.id.rawValue))),
                        ("pages", JSON(document.document.pageCount)), ("pages_done", JSON(document.pagesDone)),
                        ("keywords", .array(shown(document).map { .object([("keyword", JSON($0.text)), ("pages", JSON($0.pages))]) })),
                    ])
                })),
            ]).pretty + "\n")
            return .success
        }
        if documents.isEmpty {
            Console.out("no documents in \(store.path)\n")
            return .success
        }
        var text = ""
        for document in documents {
            text += "\(document.document.name)  (\(document.pagesDone)/\(document.document.pageCount) pages read): "
            if document.pagesDone == 0 {
                text += "no pages read yet\n"
            } else if document.keywords.isEmpty {
                text += "no keywords\n"
            } else {
                // The number of pages a keyword is on, where it says something: "(1)" after every keyword of a
                // one-page document was noise (issue 36).
                text += shown(document).map { $0.pages > 1 ? "\($0.text) (\($0.pages))" : $0.text }.joined(separator: ", ")
                if document.keywords.count > shown(document).count { text += ", …" }
                text += "\n"
            }
        }
        Console.out(text)
        return .success
    }
}
