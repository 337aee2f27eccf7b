import Testing
import FarmCore
import FarmRuntime
@testable import FarmStore
import TestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `ocrfarm delete`, and what `submit` does with a file that changed or became readable: real processes, real
/// Tesseract, real store files.
@Suite("Documents you can manage (end to end)", .serialized)
struct DocumentManagementTests {
    @Test("delete --dry-run counts and changes nothing; delete removes the document, its pages, history, results and search entries")
    func delete() throws {
        let farm = FarmHarness()
        let pages = try TestImages.phototestCopies(2, in: farm.folder, prefix: "box")
        let run = try Run.ocrfarm(["run", "--store", farm.storePath, "--workers", "2", pages], environment: ["OMP_THREAD_LIMIT": "1"])
        #expect(run.status == 0, "\(run.stderr)")
        let search = { try Run.ocrfarm(["search", "--store", farm.storePath, "quick"]) }
        let before = try search().text
        #expect(before.hasPrefix("2 pages match"), "\(before)")

        let dry = try Run.ocrfarm(["delete", "--store", farm.storePath, "--document", "box-0.tif", "--dry-run"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.text.hasPrefix("would delete 1 document, 1 page (1 with results):\n  box-0.tif  (1 page)\n"), "\(dry.text)")
        #expect(try Store(path: farm.storePath, readOnly: true).documentRecords().count == 2)

        let deleted = try Run.ocrfarm(["delete", "--store", farm.storePath, "--document", "box-0.tif"])
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(deleted.text.hasPrefix("deleted 1 document, 1 page (1 with results)"), "\(deleted.text)")
        let store = try Store(path: farm.storePath, readOnly: true)
        #expect(try store.documentRecords().map(\.name) == ["box-1.tif"])
        #expect(try store.pages().count == 1)
        let orphans = try store.connection.cached("""
            SELECT (SELECT count(*) FROM attempts WHERE page_id NOT IN (SELECT id FROM pages))
                 + (SELECT count(*) FROM results WHERE page_id NOT IN (SELECT id FROM pages))
                 + (SELECT count(*) FROM artifacts WHERE page_id NOT IN (SELECT id FROM pages))
                 + (SELECT count(*) FROM page_search WHERE rowid NOT IN (SELECT id FROM pages))
            """).rows([]) { $0.int(0) }.first
        #expect(orphans == 0, "nothing of the deleted page is left")
        let after = try search().text
        #expect(after.hasPrefix("1 page match"), "\(after)")
        #expect(FileSystem.exists(pages + "/box-0.tif"), "the submitted file itself is never touched")

        let unknown = try Run.ocrfarm(["delete", "--store", farm.storePath, "--document", "box-0.tif"])
        #expect(unknown.status == 66 && unknown.stderr.contains("no document named 'box-0.tif'"), "\(unknown.stderr)")
        let bare = try Run.ocrfarm(["delete", "--store", farm.storePath])
        #expect(bare.status == 64, "\(bare.stderr)")
        // The same file submitted again is a new document.
        #expect(try farm.submit([pages]).stderr.contains("submitted 1 document, 1 page (1 already submitted"))
    }

    @Test("search finds a document by its name, accents folded: muller finds Brief an Müller (1).tif")
    func searchByName() throws {
        let farm = FarmHarness()
        let path = farm.folder.write("Brief an Müller (1).tif", try Fixtures.read("tesseract-testdata/phototest.tif"))
        let run = try Run.ocrfarm(["run", "--store", farm.storePath, "--workers", "1", path], environment: ["OMP_THREAD_LIMIT": "1"])
        #expect(run.status == 0, "\(run.stderr)")
        let search = try Run.ocrfarm(["search", "--store", farm.storePath, "muller"])
        #expect(search.status == 0, "\(search.stderr)")
        #expect(search.text == "no pages match muller\ndocuments named or catalogued like it (title, creator, shelfmark…):\n  Brief an Müller (1).tif  (1 page)\n", "\(search.text)")
        let both = try Run.ocrfarm(["search", "--store", farm.storePath, "--json", "quick"])
        let json = try JSON.parse(Array(both.stdout))
        #expect(json["hits"]?.arrayValue?.count == 1 && json["documents_named"]?.arrayValue?.isEmpty == true, "\(both.text)")
        // Deleted, it is not found by name either.
        #expect(try Run.ocrfarm(["delete", "--store", farm.storePath, "--document", "Brief an Müller (1).tif"]).status == 0)
        #expect(try Run.ocrfarm(["search", "--store", farm.storePath, "muller"]).status == 1)
    }

    @Test("a changed file: a new document beside the old one, or with --replace instead of it")
    func changedFile() throws {
        let farm = FarmHarness()
        let path = farm.folder.write("letter.png", TestImages.png(marker: "first"))
        #expect(try farm.submit([path]).status == 0)
        try FileSystem.write(TestImages.png(marker: "second"), to: path)
        let beside = try farm.submit([path])
        #expect(beside.stderr.contains("letter.png: changed since it was submitted as 'letter.png'; submitted as a new document beside it (--replace replaces it)"),
                "\(beside.stderr)")
        #expect(try Store(path: farm.storePath, readOnly: true).documentRecords().count == 2)
        try FileSystem.write(TestImages.png(marker: "third"), to: path)
        let replaced = try farm.submit([path, "--replace"])
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(replaced.stderr.contains("letter.png: changed since it was submitted; replaces 'letter.png'"), "\(replaced.stderr)")
        let store = try Store(path: farm.storePath, readOnly: true)
        #expect(try store.documentRecords().count == 1, "both earlier versions replaced")
    }

    @Test("a file that failed as unreadable, submitted again once readable, replaces its failed page")
    func unreadableThenReadable() throws {
        let farm = FarmHarness()
        let path = farm.folder.write("scan.png", TestImages.png(marker: "locked"))
        #expect(chmod(path, 0) == 0)
        // Root reads any file; without the capabilities that let it, it cannot (as BadInputTests does).
        var prefix: [String] = []
        if getuid() == 0 {
            let setpriv = try #require(Run.which("setpriv"), "setpriv (util-linux) keeps root out of an unreadable file")
            prefix = [setpriv, "--bounding-set", "-dac_override,-dac_read_search", "--"]
        }
        let locked = try Run.process(prefix.first ?? Fixtures.binary,
                                     Array(prefix.dropFirst()) + (prefix.isEmpty ? [] : [Fixtures.binary]) + ["submit", "--store", farm.storePath, path])
        #expect(locked.status == 65 && locked.stderr.contains("unreadable"), "\(locked.stderr)")
        #expect(chmod(path, 0o644) == 0)
        let readable = try farm.submit([path])
        #expect(readable.status == 0, "\(readable.stderr)")
        #expect(readable.stderr.contains("scan.png: readable now; replaces its failed (unreadable) page"), "\(readable.stderr)")
        let store = try Store(path: farm.storePath, readOnly: true)
        #expect(try store.documentRecords().map(\.name) == ["scan.png"], "one document of that name")
        #expect(try store.pages().map(\.state) == [.queued])
    }
}
