import FarmCore
import FarmRuntime
import FarmStore

/// `ocrfarm review`: the pages (and documents) most worth checking by eye, weakest first.
struct ReviewCommand: Command {
    static let name = "review"
    static let abstract = "List the weakest pages and documents first, by their quality figure, to check by eye."
    static let arguments = ""
    static let options: [OptionSpec] = [
        StoreOption.spec,
        ReportDocuments.spec,
        OptionSpec("--below", value: "X", "Only pages (and documents, by their mean) with a figure below X (0 to 1)."),
        OptionSpec("--limit", value: "N", "At most N pages and N documents (default: 20; 0 for all)."),
        OptionSpec("--json", "Print JSON with stable keys instead of text."),
    ]
    static let discussion = """
    Each page's quality figure (0 to 1) is measured by the worker from its reading, with no second pass: the
    mean word confidence (c), the share of longer words found in the language's dictionary (d), and the share
    of the page's ink inside the words read (k), combined as c^(1/2) d^(1/4) k^(1/4) (a part that does not
    apply is left out). A page with nothing read has figure 0. The worst region is the line read with the
    lowest confidence, with its box on the corrected page (WxH+X+Y). Pages read before quality was measured are
    counted as not measured.

    JSON keys: measured, unmeasured, pages[{document, document_id, page, page_id, figure, confidence,
    dictionary, ink, words, worst{box, confidence, text}, missing_language{script, package, read_with} when the
    page's script (Tesseract's OSD) has no installed language}], documents[{document, document_id, pages_measured,
    mean, weakest, weakest_page}]. Such a page is flagged in the text too, with the Debian package to install.

    Examples:
      ocrfarm review
      ocrfarm review --below 0.6 --limit 0
      ocrfarm review --document ledger.pdf --json

    Exit status: 0; 64 usage; 66 no store, or no document of that name.
    """

    let storePath: String
    let documentNames: [String]
    let below: Double?
    let limit: Int
    let json: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard arguments.positionals.isEmpty else {
            throw UsageError(message: "review takes no arguments (--document NAME chooses documents)")
        }
        storePath = StoreOption.path(arguments)
        documentNames = arguments.strings("--document")
        below = try arguments.double("--below", range: 0...1)
        limit = try arguments.int("--limit", range: 0...1_000_000) ?? 20
        json = arguments.flag("--json")
    }

    func run() throws -> ExitStatus {
        let store = try ReportDocuments.open(storePath)
        let review = try store.read {
            let ids = try ReportDocuments.selected(documentNames, in: store)?.map(\.id)
            return try store.qualityReview(below: below, limit: limit == 0 ? nil : limit, documents: ids)
        }
        if json {
            Console.out(JSON.object([
                ("measured", JSON(review.measured)), ("unmeasured", JSON(review.unmeasured)),
                ("pages", .array(review.pages.map { page in
                    guard case .object(let parts) = page.quality.json else { return .null }
                    let missing = page.missingLanguage.map { note -> [(String, JSON)] in
                        [("missing_language", .object([("script", JSON(note.script)), ("package", JSON(note.package)),
                                                       ("read_with", JSON(note.readWith))]))]
                    } ?? []
                    return .object([("document", JSON(page.document.name)),
                                    ("document_id", JSON(Int(page.document.id.rawValue))),
                                    ("page", JSON(page.number)), ("page_id", JSON(Int(page.page.rawValue)))] + parts + missing)
                })),
                ("documents", .array(review.documents.map { document in
                    .object([("document", JSON(document.document.name)),
                             ("document_id", JSON(Int(document.document.id.rawValue))),
                             ("pages_measured", JSON(document.measured)), ("mean", .rounded(document.mean, places: 3)),
                             ("weakest", .rounded(document.weakest, places: 3)), ("weakest_page", JSON(document.weakestPage))])
                })),
            ]).pretty + "\n")
            return .success
        }
        guard review.measured > 0 else {
            Console.out("no measured pages in \(store.path)"
                        + (review.unmeasured > 0 ? " (\(review.unmeasured) done pages read before quality was measured)" : "") + "\n")
            return .success
        }
        func number(_ value: Double?) -> String { value.map { Format.fixed($0, 2) } ?? "–   " }
        var text = "weakest pages" + (below.map { " (figure below \(Format.fixed($0, 2)))" } ?? "")
            + ", \(review.pages.count) of \(review.measured) measured"
            + (review.unmeasured > 0 ? " (\(review.unmeasured) not measured)" : "") + ":\n"
        text += "  figure  conf  dict  ink   words  page\n"
        for page in review.pages {
            let q = page.quality
            text += "  \(number(q.figure))    \(number(q.confidence))  \(number(q.dictionary))  \(number(q.ink))  "
                + String(q.words) + String(repeating: " ", count: max(0, 5 - String(q.words).count))
                + "  \(Printable.text(page.document.name)) p\(page.number)\n"
            if let missing = page.missingLanguage {
                text += "          warning: \(missing.script) script, and no language for it is installed (read with "
                    + "\(missing.readWith)); Debian: apt-get install \(missing.package)\n"
            }
            if let worst = q.worst {
                let shown = worst.text.count > 60 ? String(worst.text.prefix(60)) + "…" : worst.text
                text += "          worst line \(number(worst.confidence)) at \(worst.box): \"\(Printable.text(shown))\"\n"
            }
        }
        text += "weakest documents, by mean figure:\n"
        for document in review.documents {
            text += "  \(number(document.mean)) mean, \(number(document.weakest)) weakest (p\(document.weakestPage)), "
                + "\(document.measured) measured  \(Printable.text(document.document.name))\n"
        }
        Console.out(text)
        return .success
    }
}
