import Testing
import FarmCore
import FarmStore
import TestSupport
import Foundation

/// What `submit` stores for the paths it is given, and what it says about what it leaves out.
@Suite("Submit: paths and what is left out (end to end)")
struct SubmitPathsTests {
    @Test("relative paths are stored absolute: a coordinator started in another folder reads the pages; names stay as typed")
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
        #expect(names.count == 3 && names.allSatisfy { $0.hasPrefix("./" + relative + "/") }, "names as typed: \(names)")

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
