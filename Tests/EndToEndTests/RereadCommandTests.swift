import Foundation
import Testing
import FarmCore
import FarmStore
import TestSupport

/// `ocrfarm reread` with real workers and Tesseract: the old result stays until the new one lands, both are kept.
@Suite("ocrfarm reread: a document read again with other options (end to end)", .serialized)
struct RereadCommandTests {
    @Test("reread --level accurate (and --lang): both readings in the history, the new one current; export meanwhile writes the old")
    func rereadKeepsHistory() throws {
        let folder = TemporaryDirectory()
        let pages = folder.file("pages")
        try FileManager.default.createDirectory(atPath: pages, withIntermediateDirectories: true)
        folder.write("pages/photo.tif", try Fixtures.read("tesseract-testdata/phototest.tif"))
        let store = folder.file("farm.db")
        let environment: [String: String?] = ["OMP_THREAD_LIMIT": "1"]
        let first = try Run.ocrfarm(["run", "--store", store, "--workers", "1", "--outputs", "none", pages], environment: environment)
        try #require(first.status == 0, "\(first.stderr)")
        let page = try #require(try Store(path: store, readOnly: true).pages().first)
        let before = try Store(path: store, readOnly: true).readings(of: page.id)
        try #require(before.count == 1 && before[0].current)

        // A dry run changes nothing.
        let dry = try Run.ocrfarm(["reread", "--store", store, "--document", "photo.tif", "--level", "accurate", "--dry-run"])
        #expect(dry.status == 0 && dry.text.contains("would read 1 page"), "\(dry.text)\(dry.stderr)")
        #expect(try Store(path: store, readOnly: true).pages().first?.state == .done)
        #expect(try Run.ocrfarm(["reread", "--store", store, "--document", "nothing.tif"]).status == 66)
        #expect(try Run.ocrfarm(["reread", "--store", store]).status == 64)

        let languages = (try? Run.process("/usr/bin/tesseract", ["--list-langs"]).text) ?? ""
        let other = languages.split(separator: "\n").contains("deu") ? "deu" : "eng"
        let reread = try Run.ocrfarm(["reread", "--store", store, "--document", "photo.tif", "--level", "accurate", "--lang", other])
        #expect(reread.status == 0, "\(reread.stderr)")
        #expect(reread.text.contains("queued 1 page") && reread.text.contains("level accurate"), "\(reread.text)")

        // Queued again, but its result is still there: search finds it, export writes it.
        let waiting = try Store(path: store, readOnly: true)
        #expect(try waiting.pages().first?.state == .queued)
        #expect(try waiting.text(of: page.id) == before[0].text)
        let search = try Run.ocrfarm(["search", "--store", store, "quick"])
        #expect(search.status == 0 && search.text.contains("photo.tif"), "\(search.text)\(search.stderr)")
        let out = folder.file("export")
        let export = try Run.ocrfarm(["export", "--store", store, "--out", out, "--format", "text"])
        #expect(export.status == 0, "\(export.text)\(export.stderr)")
        let exported = (try? String(contentsOfFile: out + "/photo/0001.txt", encoding: .utf8)) ?? ""
        #expect(exported == before[0].text, "the old result is exported until the new one lands")

        let second = try Run.ocrfarm(["run", "--store", store, "--workers", "1"], environment: environment)
        #expect(second.status == 0, "\(second.stderr)")
        let after = try Store(path: store, readOnly: true)
        #expect(try after.pages().first?.state == .done)
        let readings = try after.readings(of: page.id)
        try #require(readings.count == 2, "\(readings)")
        #expect(!readings[0].current && readings[1].current)
        #expect(readings[1].attempt > readings[0].attempt)
        #expect(readings[0].text == before[0].text)
        #expect(readings[0].replacedAt != nil)
        let oldOptions = PageOptions(json: try? JSON.parse(readings[0].optionsJSON ?? ""))
        #expect(oldOptions.level == .fast && oldOptions.languages == ["eng"], "the old reading's options: \(readings[0].optionsJSON ?? "")")
        let newOptions = try #require(try after.options(of: page.document))
        #expect(newOptions.level == .accurate && newOptions.languages == [other])
        #expect(try after.text(of: page.id) == readings[1].text)

        // Deleting the document takes its history too.
        #expect(try Run.ocrfarm(["delete", "--store", store, "--document", "photo.tif"]).status == 0)
        #expect(try Store(path: store, readOnly: true).readings(of: page.id).isEmpty)
    }
}
