import FarmCore
import FarmRuntime
import FarmStore

/// `ocrfarm delete`: remove documents from the store.
struct DeleteCommand: Command {
    static let name = "delete"
    static let abstract = "Remove documents, their pages, results and search entries from the store."
    static let arguments = ""
    static let options: [OptionSpec] = [
        StoreOption.spec,
        OptionSpec("--document", value: "NAME", repeatable: true,
                   "The document to remove (its name, the path submitted, or the file name); may be repeated. Required."),
        OptionSpec("--dry-run", "Say what would be removed; change nothing."),
    ]
    static let discussion = """
    Every document a --document names is removed in one transaction, all or nothing: its pages, their attempt
    history, results, stored renderings and search entries. Page files that submit split out of a big multi-page
    file (in STORE.pages) go too when no other page reads them; the submitted files themselves are never touched.
    Submitting the same files again afterwards makes new documents. Documents a worker is reading (a page leased)
    are refused: wait until the pages are done or stop the coordinator. A name that belongs to several documents
    removes them all (--dry-run lists them first).

    Exit status: 0 removed (or would be, with --dry-run); 64 bad usage; 66 no store, or no document of that name;
    75 a page of them is being read.
    """

    let storePath: String
    let names: [String]
    let dryRun: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard arguments.positionals.isEmpty else {
            throw UsageError(message: "delete takes no arguments; name documents with --document NAME")
        }
        storePath = StoreOption.path(arguments)
        names = arguments.values["--document"] ?? arguments.string("--document").map { [$0] } ?? []
        guard !names.isEmpty else { throw UsageError(message: "say which documents: --document NAME (delete never removes everything)") }
        for name in names where name.isEmpty { throw UsageError(message: "--document needs a name, not an empty string") }
        dryRun = arguments.flag("--dry-run")
    }

    func run() throws -> ExitStatus {
        let reader = try ReportDocuments.open(storePath)
        guard let documents = try ReportDocuments.selected(names, in: reader) else { return .usage }
        let store = dryRun ? reader : try Store(path: storePath)
        let report: DeleteReport
        do {
            report = try store.delete(documents.map(\.id), dryRun: dryRun)
        } catch let refusal as DeleteRefusal {
            throw CommandFailure(.tryAgain, "not deleted: \(refusal)")
        }
        var out = ""
        for document in documents.prefix(20) {
            out += "  \(Printable.text(document.name))  (\(document.pageCount) page\(document.pageCount == 1 ? "" : "s"))\n"
        }
        if documents.count > 20 { out += "  … and \(documents.count - 20) more\n" }
        let what = "\(report.documents) document\(report.documents == 1 ? "" : "s"), \(report.pages) page\(report.pages == 1 ? "" : "s")"
            + " (\(report.results) with results)"
        if dryRun {
            out = "would delete \(what):\n" + out + "dry run: nothing was changed\n"
        } else {
            for file in report.splitFiles { FileSystem.remove(file.description) }
            out = "deleted \(what):\n" + out
            if !report.splitFiles.isEmpty { out += "removed \(report.splitFiles.count) split page file\(report.splitFiles.count == 1 ? "" : "s")\n" }
        }
        Console.out(out)
        return .success
    }
}
