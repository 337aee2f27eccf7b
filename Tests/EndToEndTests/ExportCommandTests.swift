import Testing
import FarmCore
import FarmRuntime
@testable import FarmStore
import FarmRender
import TestSupport
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A store filled by a real farm (real Tesseract, real processes), made once for the export tests:
/// - "clean pages": Samples/pages/clean-000.png and clean-001.png, done;
/// - "scans/phototest.tif": the tesseract-testdata page under a path name (given with --document), done;
/// - "../../etc/evil": a hostile name, done;
/// - "a/b" and "a_b": names whose safe forms collide, done;
/// - "partly failed": a page done and a file that is not an image (failed at submit);
/// - "no outputs": submitted with --outputs none, done (text only);
/// - "in progress": two pages, the first done, the second held by a worker killed while reading it;
/// - "later": submitted after the farm stopped, queued.
final class ExportFarm: @unchecked Sendable {
    let farm = FarmHarness()
    var store: String { farm.storePath }
    var folder: TemporaryDirectory { farm.folder }

    static let shared: Result<ExportFarm, any Error> = Result { try ExportFarm() }
    nonisolated(unsafe) static var root: String?

    init() throws {
        Self.root = farm.folder.path
        // A static is never released: the folder goes when the test process exits.
        atexit { if let root = ExportFarm.root { FileSystem.remove(root) } }
        let copies = try TestImages.phototestCopies(8, in: folder, prefix: "photo")
        func copy(_ index: Int) -> String { "\(copies)/photo-\(index).tif" }
        try FileManager.default.createDirectory(atPath: folder.file("scans"), withIntermediateDirectories: true)
        folder.write("scans/phototest.tif", try Fixtures.read("tesseract-testdata/phototest.tif"))
        let junk = folder.write("junk.png", BadInput.randomBytes(4000))
        let samples = Fixtures.packageRoot + "/Samples/pages"
        func submit(_ arguments: [String]) throws {
            let output = try Run.ocrfarm(["submit", "--store", store] + arguments, currentDirectory: folder.path)
            guard output.status == 0 || output.status == 65 else { throw FarmError("submit \(arguments): \(output.stderr)") }
        }
        try submit(["--document", "clean pages", "\(samples)/clean-000.png", "\(samples)/clean-001.png"])
        try submit(["--document", "scans/phototest.tif", "scans/phototest.tif"])
        try submit(["--document", "../../etc/evil", copy(0)])
        try submit(["--document", "a/b", copy(1)])
        try submit(["--document", "a_b", copy(2)])
        try submit(["--document", "partly failed", copy(3), junk])
        let run = try Run.ocrfarm(["run", "--store", store, "--workers", "2", "--document", "no outputs", "--outputs", "none",
                                   copy(4)], currentDirectory: folder.path)
        guard run.status == 0 || run.status == 65 else { throw FarmError("run: \(run.status) \(run.stderr)") }

        // A document caught in progress: its first page done, its second held by a worker that was killed.
        let port = FarmHarness.freePort()
        _ = try farm.startCoordinator(port: port, ["--heartbeat", "200"])
        let worker = try farm.startWorker(port: port, ["--slots", "1", "--prefetch", "0", "--heartbeat", "200"], name: "worker")
        try submit(["--document", "in progress", copy(5), copy(6)])
        let caught = try FarmHarness.wait(seconds: 120) {
            let reader = try Store(path: store, readOnly: true)
            guard let document = try reader.documents(named: "in progress").first else { return false }
            return try reader.counts(of: [document.id])[.done] ?? 0 >= 1
        }
        worker.kill9()
        farm.stopAll()
        guard caught else { throw FarmError("the first page of 'in progress' was not read: \(farm.logs)") }
        try submit(["--document", "later", copy(7)])
    }

    func openStore() throws -> Store { try Store(path: store, readOnly: true) }

    /// Runs `ocrfarm export` on the store, flat: these tests check the names made safe in one folder (`etc_evil`,
    /// the `a_b` collision); the tree layout (the default) has tests of its own below.
    func export(_ arguments: [String], layout: String = "flat") throws -> ProcessOutput {
        try Run.ocrfarm(["export", "--store", store, "--layout", layout] + arguments)
    }

    /// Every path under `path`, relative to it ("a", "a/b.txt"), without following links.
    static func tree(_ path: String) -> Set<String> {
        var paths: Set<String> = []
        guard let enumerator = FileManager.default.enumerator(atPath: path) else { return paths }
        while let next = enumerator.nextObject() as? String { paths.insert(next) }
        return paths
    }
}

struct FarmError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

@Suite("ocrfarm export (end to end)", .serialized)
struct ExportCommandTests {
    func farm() throws -> ExportFarm { try ExportFarm.shared.get() }

    /// The stored page of `document` numbered `number`.
    func page(_ store: Store, _ document: String, _ number: Int) throws -> PageRecord {
        let id = try #require(try store.documents(named: document).first?.id)
        return try #require(try store.pages(of: [id]).first { $0.number == number })
    }

    @Test("every document: a PDF of its done pages and a folder of page files; warnings for what is left out; exit 65")
    func everything() throws {
        let farm = try farm()
        let exports = farm.folder.file("exports/all")
        let out = exports + "/out"
        let before = ExportFarm.tree(farm.folder.path).filter { !$0.hasPrefix("farm.db") }
        let output = try farm.export(["--out", out])
        #expect(output.status == 65, "\(output.stderr)")
        let store = try farm.openStore()
        let collided = try #require(try store.documents(named: "a_b").first?.id)
        let entries = Set(try FileManager.default.contentsOfDirectory(atPath: out))
        #expect(entries == [
            "clean pages.pdf", "clean pages", "scans_phototest.pdf", "scans_phototest", "etc_evil.pdf", "etc_evil",
            "a_b.pdf", "a_b", "a_b~\(collided).pdf", "a_b~\(collided)", "partly failed.pdf", "partly failed", "no outputs",
            "in progress.pdf", "in progress",
        ], "\(entries.sorted())")
        let pageFiles = ["0001.txt", "0001.hocr", "0001.alto.xml", "0001.page.xml", "0001.json"]
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: out + "/clean pages"))
                == Set(pageFiles + pageFiles.map { $0.replacingOccurrences(of: "0001", with: "0002") }))
        for folder in ["scans_phototest", "etc_evil", "a_b", "a_b~\(collided)", "partly failed", "in progress"] {
            #expect(Set(try FileManager.default.contentsOfDirectory(atPath: out + "/" + folder)) == Set(pageFiles), "\(folder)")
        }
        // Submitted with --outputs none: no PDF page, the rest rendered from the page's model (render on demand).
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: out + "/no outputs")) == Set(pageFiles))

        // Warnings name the document and the counts; the summary counts what was written.
        let warnings = output.stderrLines
        // Its failed page (not an image) is a placeholder page in its PDF, listed, and the document counts as whole.
        #expect(warnings.contains { $0.hasPrefix("ocrfarm export: warning: document 'partly failed': 1 page failed for good, in the PDF without text: page 2 (")
            && $0.contains(", placeholder); no image for page 2: the file is not a page (refused at submit)") }, "\(output.stderr)")
        #expect(warnings.contains { $0.contains("document 'in progress' is not complete: 1 of 2 pages done (1 ") }, "\(output.stderr)")
        #expect(warnings.contains("ocrfarm export: warning: document 'later': 0 of 1 page done (1 queued); nothing to export"))
        #expect(warnings.contains("ocrfarm export: warning: document 'no outputs': no stored pdf for page 1 (submitted with --outputs none); left out of the pdf export"), "\(output.stderr)")
        #expect(warnings.count == 4, "\(output.stderr)")
        #expect(output.text == "exported 8 documents, 9 pages, 52 files into \(out); 1 document skipped; "
                + "1 degraded page (failed for good) in the PDFs without text: 0 as their image, 1 as a placeholder; 4 warnings\n", "\(output.text)")

        // Nothing was written outside --out: the farm's folder holds what it held, plus the export folder.
        let after = ExportFarm.tree(farm.folder.path).filter { !$0.hasPrefix("farm.db") && !$0.hasPrefix("exports/all/out") }
        #expect(after == before.union(["exports", "exports/all"]), "\(after.subtracting(before).sorted())")
        for path in ExportFarm.tree(out) {
            for component in path.split(separator: "/") {
                #expect(!component.hasPrefix(".") && !component.unicodeScalars.contains { $0.value < 0x20 }, "\(path)")
            }
        }

        // Each page file is a whole document: XML well-formed, JSON parses, text as stored.
        for path in ExportFarm.tree(out) where !path.hasSuffix(".pdf") && path.contains("/") {
            let bytes = try FileSystem.read(out + "/" + path)
            if path.hasSuffix(".xml") || path.hasSuffix(".hocr") {
                #expect(XMLParser(data: Data(bytes)).parse(), "\(path) is not well-formed XML")
            } else if path.hasSuffix(".json") {
                let json = try JSON.parse(bytes)
                #expect(json["words"]?.arrayValue?.isEmpty == false, "\(path)")
            }
        }
        let stored = try #require(try store.text(of: page(store, "clean pages", 2).id))
        #expect(try FileSystem.readText(out + "/clean pages/0002.txt") == stored)
        #expect(try FileSystem.readText(out + "/no outputs/0001.txt") == store.text(of: page(store, "no outputs", 1).id))
        #expect(try pdfPages(out + "/partly failed.pdf") == 2)
        #expect(try pdfPages(out + "/in progress.pdf") == 1)
    }

    @Test("the merged PDF has the pages in order, gives their text back, and puts each word on its box")
    func mergedPDF() throws {
        let farm = try farm()
        let out = farm.folder.file("exports/pdf")
        // A document is named as submitted, or by its file name ("phototest.tif" for "scans/phototest.tif").
        #expect(try farm.export(["--out", out, "--document", "clean pages", "--document", "phototest.tif",
                                 "--format", "pdf"]).status == 0)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: out)) == ["clean pages.pdf", "scans_phototest.pdf"])
        let pdf = out + "/clean pages.pdf"
        #expect(try pdfPages(pdf) == 2)
        let store = try farm.openStore()
        for number in 1...2 {
            let text = try Run.process("/usr/bin/pdftotext", ["-f", "\(number)", "-l", "\(number)", pdf, "-"]).text
            let truth = try FileSystem.readText(Fixtures.packageRoot + "/Samples/truth/clean-00\(number - 1).gt.txt")
            let stored = try #require(try store.text(of: page(store, "clean pages", number).id))
            #expect(TextMetrics.characterErrorRate(reference: truth, hypothesis: text) < 0.02, "page \(number)")
            #expect(TextMetrics.characterErrorRate(reference: stored, hypothesis: text) < 0.01, "page \(number)")
        }
        let photo = try Run.process("/usr/bin/pdftotext", [out + "/scans_phototest.pdf", "-"]).text
        #expect(TextMetrics.characterErrorRate(reference: Fixtures.phototestTruth, hypothesis: photo) < 0.03)

        // Page 2's invisible words lie on the boxes of the stored JSON, scaled to points.
        // The page JSON as export renders it from the stored page model (render on demand).
        let model = try #require(try store.model(of: page(store, "clean pages", 2).id))
        let json = try JSON.parse(try #require(PageArtifacts.render(model, outputs: [.json]).first?.1))
        let resolution = Double(try #require(json["resolution"]?.intValue))
        let (placed, checked) = try PDFWordPlacement.count(pdf: pdf, page: 2, words: try #require(json["words"]?.arrayValue),
                                                           resolution: resolution)
        #expect(checked > 300)
        #expect(Double(placed) >= 0.98 * Double(checked), "\(placed) of \(checked) words on their boxes")
    }

    @Test("--complete-only skips documents with pages not done, with a warning; the rest is exported")
    func completeOnly() throws {
        let farm = try farm()
        let out = farm.folder.file("exports/complete")
        let output = try farm.export(["--out", out, "--complete-only", "--format", "pdf,txt"])
        #expect(output.status == 65)
        #expect(output.stderrLines.contains("ocrfarm export: warning: document 'partly failed' skipped (--complete-only): 1 of 2 pages done (1 failed)"), "\(output.stderr)")
        #expect(output.stderrLines.contains { $0.contains("document 'in progress' skipped (--complete-only): 1 of 2 pages done") })
        let entries = Set(try FileManager.default.contentsOfDirectory(atPath: out))
        #expect(!entries.contains("partly failed.pdf") && !entries.contains("partly failed"))
        #expect(!entries.contains("in progress.pdf") && !entries.contains("in progress") && !entries.contains("later"))
        #expect(entries.contains("clean pages.pdf") && entries.contains("no outputs"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: out + "/clean pages").sorted() == ["0001.txt", "0002.txt"])
        #expect(output.text.contains("3 documents skipped"), "\(output.text)")
    }

    @Test("--document chooses documents by name; names stay as in a full export; nothing left out gives exit 0")
    func chosenDocuments() throws {
        let farm = try farm()
        let out = farm.folder.file("exports/chosen")
        let output = try farm.export(["--out", out, "--document", "a_b", "--document", "../../etc/evil", "--format", "txt,json"])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stderr.isEmpty)
        let collided = try #require(try farm.openStore().documents(named: "a_b").first?.id)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: out)) == ["a_b~\(collided)", "etc_evil"])
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: out + "/etc_evil")) == ["0001.txt", "0001.json"])
        #expect(output.text == "exported 2 documents, 2 pages, 4 files into \(out); 0 warnings\n")
        // The hostile name went nowhere near /etc or the folders above --out.
        #expect(!FileManager.default.fileExists(atPath: farm.folder.file("etc")))
        #expect(!FileManager.default.fileExists(atPath: farm.folder.file("exports/etc")))
    }

    @Test("an unknown --document name ends the export with 66, naming it and names containing it; nothing is created")
    func unknownDocument() throws {
        let farm = try farm()
        let out = farm.folder.file("exports/unknown")
        let output = try farm.export(["--out", out, "--document", "clean"])
        #expect(output.status == 66)
        #expect(output.stderr.contains("no document named 'clean' in \(farm.store); names containing it: 'clean pages'"), "\(output.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        let none = try farm.export(["--out", out, "--document", "nothing like it"])
        #expect(none.status == 66 && none.stderr.contains("no document named 'nothing like it'"))
    }

    @Test("usage errors: no --out, a bad format, an argument, an empty name; a missing store is 66")
    func usage() throws {
        let farm = try farm()
        let out = farm.folder.file("exports/usage")
        let cases: [([String], String)] = [
            ([], "--out DIR is required"),
            (["--out", out, "--format", "pdf,docx"], "--format takes pdf, text, hocr, alto, page, json, not 'docx'"),
            (["--out", out, "somewhere"], "export takes no arguments"),
            (["--out", out, "--document", ""], "--document needs a name"),
        ]
        for (arguments, message) in cases {
            let output = try farm.export(arguments)
            #expect(output.status == 64, "\(arguments)")
            #expect(output.stderr.contains(message), "\(output.stderr)")
        }
        let missing = try Run.ocrfarm(["export", "--store", farm.folder.file("none.db"), "--out", out])
        #expect(missing.status == 66 && missing.stderr.contains("no store at"))
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(try Run.ocrfarm(["help", "export"]).text.contains("Exit status: 0 everything chosen was exported; 65"))
        #expect(try Run.ocrfarm(["help"]).text.contains("  export "))
    }

    @Test("files are replaced whole, an interrupted export's staging folder is cleared, a planted link is never followed")
    func atomicAndContained() throws {
        let farm = try farm()
        let out = farm.folder.file("exports/again")
        #expect(try farm.export(["--out", out, "--document", "clean pages", "--format", "txt"]).status == 0)
        let first = try FileSystem.readText(out + "/clean pages/0001.txt")
        // A stale file, and what an export killed mid-way leaves: its staging folder with a partial file.
        try FileSystem.write("stale", to: out + "/clean pages/0001.txt")
        try FileManager.default.createDirectory(atPath: out + "/.ocrfarm-export-99999999", withIntermediateDirectories: true)
        try FileSystem.write("%PDF-1.4 half", to: out + "/.ocrfarm-export-99999999/f1.pdf")
        #expect(try farm.export(["--out", out, "--document", "clean pages", "--format", "txt"]).status == 0)
        #expect(try FileSystem.readText(out + "/clean pages/0001.txt") == first)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).sorted() == ["clean pages"])

        // A link planted where a document's folder goes: refused, and nothing lands where it points.
        let elsewhere = farm.folder.file("exports/elsewhere")
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: out + "/etc_evil", withDestinationPath: elsewhere)
        let output = try farm.export(["--out", out, "--document", "../../etc/evil", "--format", "txt"])
        #expect(output.status == 73)
        #expect(output.stderr.contains("etc_evil: exists and is not a folder (a symbolic link or a file); not writing through it"), "\(output.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
        #expect(!(try FileManager.default.contentsOfDirectory(atPath: out).contains { $0.hasPrefix(".ocrfarm-export-") }))
    }

    @Test("a stored PDF page qpdf cannot read costs its document the PDF, with a warning; the rest is exported")
    func brokenPDFPage() throws {
        let farm = try farm()
        // A copy of the store with one page's PDF damaged, as a failing disk or a foreign tool might leave it.
        let copy = farm.folder.file("exports/broken.db")
        try FileManager.default.createDirectory(atPath: farm.folder.file("exports"), withIntermediateDirectories: true)
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: farm.store + suffix) {
            try? FileManager.default.removeItem(atPath: copy + suffix)
            try FileManager.default.copyItem(atPath: farm.store + suffix, toPath: copy + suffix)
        }
        let writer = try Store(path: copy)
        let damaged = try page(writer, "clean pages", 2).id
        try writer.connection.execute("UPDATE artifacts SET data = CAST('%PDF-1.5 not really' AS BLOB) WHERE page_id = \(damaged.rawValue) AND name = 'pdf'")
        let out = farm.folder.file("exports/broken")
        let output = try Run.ocrfarm(["export", "--store", copy, "--layout", "flat", "--out", out, "--document", "clean pages",
                                      "--document", "a_b"])
        #expect(output.status == 65)
        #expect(output.stderrLines.contains { $0.hasPrefix("ocrfarm export: warning: document 'clean pages': cannot merge 2 PDF pages:") && $0.hasSuffix("; no PDF written") }, "\(output.stderr)")
        let entries = Set(try FileManager.default.contentsOfDirectory(atPath: out))
        let collided = try #require(try writer.documents(named: "a_b").first?.id)
        #expect(entries == ["clean pages", "a_b~\(collided).pdf", "a_b~\(collided)"], "\(entries.sorted())")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out + "/clean pages").count == 10)
    }

    @Test("--layout tree (the default): names keep their folders, '..' parts are dropped, a planted link on the way is refused")
    func treeLayout() throws {
        let farm = try farm()
        let out = farm.folder.file("exports/tree")
        let output = try farm.export(["--out", out, "--document", "scans/phototest.tif", "--document", "../../etc/evil",
                                      "--document", "a/b", "--document", "a_b", "--format", "pdf,txt"], layout: "tree")
        #expect(output.status == 0, "\(output.stderr)")
        let tree = ExportFarm.tree(out)
        for path in ["scans/phototest.pdf", "scans/phototest/0001.txt", "etc/evil.pdf", "a/b.pdf", "a/b/0001.txt", "a_b.pdf"] {
            #expect(tree.contains(path), "\(path) in \(tree.sorted())")
        }
        #expect(!tree.contains { $0.contains("..") || $0.hasPrefix(".ocrfarm") }, "\(tree.sorted())")

        // A link planted where a folder of the tree goes is never written through.
        let planted = farm.folder.file("exports/tree-planted")
        let elsewhere = farm.folder.file("exports/elsewhere-tree")
        try FileManager.default.createDirectory(atPath: planted, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: planted + "/etc", withDestinationPath: elsewhere)
        let refused = try farm.export(["--out", planted, "--document", "../../etc/evil", "--format", "txt"], layout: "tree")
        #expect(refused.status != 0, "\(refused.stderr)")
        #expect(refused.stderr.contains("etc: exists and is not a folder (a symbolic link or a file); not writing through it"),
                "\(refused.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
    }

    @Test("--text-per document: NAME.txt holds the document's pages in order, separated by form feeds")
    func documentText() throws {
        let farm = try farm()
        let out = farm.folder.file("exports/text-per-document")
        let output = try farm.export(["--out", out, "--document", "clean pages", "--format", "txt", "--text-per", "document"])
        #expect(output.status == 0, "\(output.stderr)")
        let whole = try String(contentsOfFile: out + "/clean pages.txt", encoding: .utf8)
        let pages = whole.split(separator: "\u{0C}", omittingEmptySubsequences: false).map(String.init)
        #expect(pages.count == 2)
        for (index, page) in pages.enumerated() {
            let single = try String(contentsOfFile: out + "/clean pages/000\(index + 1).txt", encoding: .utf8)
            #expect(page.trimmingCharacters(in: .whitespacesAndNewlines) == single.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let usage = try farm.export(["--out", out, "--format", "pdf", "--text-per", "document"])
        #expect(usage.status == 64, "\(usage.stderr)")
    }

    func pdfPages(_ path: String) throws -> Int? {
        let info = try Run.process("/usr/bin/pdfinfo", [path]).text
        return info.split(separator: "\n").first { $0.hasPrefix("Pages:") }.flatMap { Int($0.split(separator: " ").last ?? "") }
    }
}
