import Testing
import FarmCore
import FarmRuntime
import FarmStore
import TestSupport
import Leptonica
import Foundation

/// What `submit` stores for the paths it is given, and what it says about what it leaves out.
@Suite("Submit: paths and what is left out (end to end)")
struct SubmitPathsTests {
    @Test("relative paths are stored absolute: a coordinator started in another folder reads the pages; names are relative to the submitted folder")
    func relativePaths() throws {
        let farm = FarmHarness()
        let pages = try TestImages.tinyPages(3, in: farm.folder, prefix: "rel")
        let relative = String(pages.dropFirst(farm.folder.path.count + 1))
        // submit runs in the farm's folder with a relative store and relative pages; everything else in the
        // package folder, as a systemd unit runs in /.
        let submitted = try Run.process(Fixtures.binary, ["submit", "--store", "farm.db", "./" + relative],
                                        currentDirectory: farm.folder.path)
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let store = try Store(path: farm.storePath, readOnly: true)
        let sources = try store.pages().map(\.source.description)
        #expect(sources.count == 3 && sources.allSatisfy { $0.hasPrefix(pages + "/") }, "\(sources)")
        let names = try store.documentRecords().map(\.name)
        #expect(names == ["rel-0.png", "rel-1.png", "rel-2.png"], "names below the submitted folder: \(names)")

        let port = FarmHarness.freePort()
        _ = try farm.startCoordinator(port: port)
        _ = try farm.startWorker(port: port, ["--engine", "none"], name: "worker")
        #expect(try FarmHarness.wait(seconds: 30) {
            try Store(path: farm.storePath, readOnly: true).status().count(.done) == 3
        }, "\(farm.logs)")
        farm.stopAll()
    }

    @Test("hidden files and folders are left out with a count and examples; a hidden file named on the command line is read")
    func hiddenEntries() throws {
        let farm = FarmHarness()
        let folder = try TestImages.tinyPages(2, in: farm.folder, prefix: "scans")
        try FileSystem.write(TestImages.png(marker: "hidden"), to: folder + "/.cover.png")
        try FileSystem.makeDirectory(folder + "/.git")
        try FileSystem.write(TestImages.png(marker: "in git"), to: folder + "/.git/object.png")
        let output = try farm.submit([folder])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stderr.contains("submitted 2 documents, 2 pages (2 hidden left out: names starting with '.', e.g. "),
                "\(output.stderr)")
        #expect(output.stderr.contains(folder + "/.cover.png") && output.stderr.contains("name them to submit them"))
        let named = try farm.submit([folder + "/.cover.png"])
        #expect(named.status == 0 && named.stderr.contains("submitted 1 document, 1 page"), "\(named.stderr)")
    }

    /// An archive's folder as it comes: boxes and folders of loose page images, a multi-page TIFF, a PDF, stray
    /// notes, thumbnails databases and metadata, dot-files.
    static func messyArchive(in farm: FarmHarness) throws -> String {
        let root = farm.folder.file("archive")
        for folder in ["box17/folder3", "box17/folder4", "box18"] { try FileSystem.makeDirectory(root + "/" + folder) }
        let page = try FileSystem.read(Fixtures.path("formats/page.pnm"))
        try FileSystem.write(page, to: root + "/box17/folder3/p1.pnm")
        try FileSystem.write(TestImages.png(marker: "p2"), to: root + "/box17/folder3/p2.png")
        try FileSystem.write(TestImages.png(marker: "p10"), to: root + "/box17/folder3/p10.png")
        try FileSystem.write(TestImages.png(marker: "f4"), to: root + "/box17/folder4/scan.png")
        let small = try Pix(contentsOfFile: Fixtures.phototest).scaled(by: 0.25)
        try FileSystem.write(try Pix.multipageTIFF([small, small, small]), to: root + "/box18/volume.tif")
        try FileSystem.write(TestPDF.onePage("letter"), to: root + "/box18/letter.pdf")
        try FileSystem.write("to do: box 19\n", to: root + "/box17/notes.txt")
        try FileSystem.write([0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1] + [UInt8](repeating: 7, count: 4000),
                             to: root + "/box17/folder3/Thumbs.db")
        try FileSystem.write("{\"box\": 18}\n", to: root + "/box18/meta.json")
        try FileSystem.write(TestImages.png(marker: "mac"), to: root + "/box17/._p1.png")
        try FileSystem.write([0, 0, 0, 1], to: root + "/.DS_Store")
        return root
    }

    @Test("a messy archive folder: stray files left out and counted, not failed; names relative to the folder; exit 0")
    func messyFolder() throws {
        let farm = FarmHarness()
        let root = try Self.messyArchive(in: farm)
        let output = try farm.submit([root])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stderr.contains("submitted 6 documents, 8 pages (3 not images or PDFs left out, e.g. "), "\(output.stderr)")
        #expect(output.stderr.contains("2 hidden left out"), "\(output.stderr)")
        #expect(!output.stderr.contains("notes.txt:"), "no line per stray file without --verbose: \(output.stderr)")
        let store = try Store(path: farm.storePath, readOnly: true)
        let names = try store.documentRecords().map(\.name)
        #expect(names == ["box17/folder3/p1.pnm", "box17/folder3/p2.png", "box17/folder3/p10.png", "box17/folder4/scan.png",
                          "box18/letter.pdf", "box18/volume.tif"], "\(names)")
        #expect(try store.status().count(.failed) == 0)

        // Again, verbosely: everything is already submitted (one summary), and each left-out file is named.
        let again = try farm.submit([root, "--verbose"])
        #expect(again.status == 0, "\(again.stderr)")
        for name in ["box17/notes.txt", "box17/folder3/Thumbs.db", "box18/meta.json"] {
            #expect(again.stderr.contains(root + "/" + name + ": left out: neither an image nor a PDF"), "\(again.stderr)")
        }
        #expect(again.stderr.contains("submitted 0 documents, 0 pages (6 already submitted;"), "\(again.stderr)")
        let quiet = try farm.submit([root])
        #expect(!quiet.stderr.contains("already submitted as"), "one summary line, not one per file: \(quiet.stderr)")
        #expect(quiet.stderr.contains("6 already submitted (--verbose lists them"), "\(quiet.stderr)")
    }

    @Test("a file named as an image that is not one still fails with its reason, in a folder too")
    func misnamedFile() throws {
        let farm = FarmHarness()
        let folder = try TestImages.tinyPages(1, in: farm.folder, prefix: "box")
        try FileSystem.write("not a scan\n", to: folder + "/broken.tif")
        try FileSystem.write("not a scan\n", to: folder + "/readme.txt")
        let output = try farm.submit([folder])
        #expect(output.status == 65, "\(output.stderr)")
        #expect(output.stderr.contains("broken.tif: decode-failed: not an image (looks like text)"), "\(output.stderr)")
        #expect(output.stderr.contains("1 not images or PDFs left out, e.g. readme.txt"), "\(output.stderr)")
    }

    @Test("--document-per folder: each folder's loose pages are one document in natural order; volumes stay whole; --include/--exclude")
    func documentPerFolder() throws {
        let farm = FarmHarness()
        let root = try Self.messyArchive(in: farm)
        let output = try farm.submit([root, "--document-per", "folder", "--exclude", "folder4", "--exclude", "*.pdf"])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stderr.contains("2 left out by --include/--exclude"), "\(output.stderr)")
        let store = try Store(path: farm.storePath, readOnly: true)
        let documents = try store.documentRecords()
        #expect(documents.map(\.name) == ["box18/volume.tif", "box17/folder3"], "\(documents.map(\.name))")
        let pages = try store.pages()
        let box = try #require(documents.first { $0.name == "box17/folder3" })
        let boxPages = pages.filter { $0.document == box.id }.sorted { $0.number < $1.number }
        #expect(boxPages.map { FileSystem.baseName($0.source.description) } == ["p1.pnm", "p2.png", "p10.png"])
        #expect(pages.filter { $0.document != box.id }.count == 3, "the multi-page TIFF keeps its own document of 3 pages")

        // The same folder again is known (one content hash per folder document); --include takes only what matches.
        let again = try farm.submit([root, "--document-per", "folder", "--exclude", "folder4", "--exclude", "*.pdf"])
        #expect(again.stderr.contains("submitted 0 documents"), "\(again.stderr)")
        let other = FarmHarness()
        let only = try other.submit([root, "--include", "*.PNG"])
        #expect(only.stderr.contains("submitted 3 documents, 3 pages"), "\(only.stderr)")
    }

    @Test("the README's tour on a messy archive: run by box folders exits 0; export gives the same tree, one PDF per folder")
    func messyArchiveTour() throws {
        let farm = FarmHarness()
        let root = try Self.messyArchive(in: farm)
        let run = try Run.ocrfarm(["run", "--store", farm.storePath, "--workers", "2", "--document-per", "folder", root],
                                  environment: ["OMP_THREAD_LIMIT": "1"])
        #expect(run.status == 0, "\(run.stderr)")
        let out = farm.folder.file("out")
        let export = try Run.ocrfarm(["export", "--store", farm.storePath, "--out", out, "--format", "pdf,txt", "--text-per", "document"])
        #expect(export.status == 0, "\(export.stderr)")
        let tree = Set(FileManager.default.enumerator(atPath: out)?.compactMap { $0 as? String } ?? [])
        for path in ["box17/folder3.pdf", "box17/folder3.txt", "box17/folder4.pdf", "box18/volume.pdf", "box18/letter.pdf"] {
            #expect(tree.contains(path), "\(path) in \(tree.sorted())")
        }
        let info = try Run.process("/usr/bin/pdfinfo", [out + "/box17/folder3.pdf"]).text
        #expect(info.contains("Pages:           3"), "three loose pages, one PDF: \(info)")
        let text = try String(contentsOfFile: out + "/box17/folder3.txt", encoding: .utf8)
        #expect(text.contains("This is a lot of 12 point text"), "page 1 (page.pnm) read: \(text)")
    }

    @Test("export warnings show a name's bidi override escaped, as status does")
    func bidiInWarnings() throws {
        let farm = FarmHarness()
        let name = farm.folder.write("invoice\u{202E}fdp.png", Array("not an image".utf8))
        #expect(try farm.submit([name]).status == 65)
        let out = farm.folder.file("out")
        let output = try Run.ocrfarm(["export", "--store", farm.storePath, "--out", out, "--complete-only"])
        #expect(output.stderr.contains("warning: document '"), "\(output.stderr)")
        #expect(output.stderr.contains("invoice\\u202Efdp.png"), "\(output.stderr)")
        #expect(!output.stderr.unicodeScalars.contains("\u{202E}"), "no raw override reaches the terminal")
    }
}
