import Foundation
import Testing
import FarmCore
import TestSupport

/// Issue 36, item 6: `--lang auto` read a Cyrillic page as Latin, silently, because no Russian data was installed;
/// `review` ranked it worst without saying why. Now the page's finding, `ocr`, `run`'s summary and `review` name
/// the script and the Debian package that reads it.
@Suite("A script with no installed language is named (end to end)")
struct MissingLanguageTests {
    /// A tessdata folder with English and OSD only (and the rest of the system's tessdata that is not a language:
    /// pdf.ttf, configs), so that no Cyrillic language is installed whatever this host has.
    static func englishOnly(_ folder: TemporaryDirectory) throws -> [String: String?] {
        let system = ProcessInfo.processInfo.environment["TESSDATA_PREFIX"] ?? "/usr/share/tesseract-ocr/5/tessdata"
        let data = folder.file("tessdata")
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        for name in ["eng.traineddata", "osd.traineddata"] {
            try #require(FileManager.default.fileExists(atPath: system + "/" + name), "\(name) in \(system)")
        }
        for name in try FileManager.default.contentsOfDirectory(atPath: system)
        where !name.hasSuffix(".traineddata") || name == "eng.traineddata" || name == "osd.traineddata" {
            try FileManager.default.createSymbolicLink(atPath: data + "/" + name, withDestinationPath: system + "/" + name)
        }
        return ["TESSDATA_PREFIX": data, "OMP_THREAD_LIMIT": "1"]
    }

    @Test("a Cyrillic page read with English only: the finding, ocr's warning, run's summary and review name tesseract-ocr-rus; a Latin page none")
    func cyrillicWithoutRussian() throws {
        let folder = TemporaryDirectory("missing-language")
        let environment = try Self.englishOnly(folder)
        let cyrillic = folder.write("cyrillic.png", try Fixtures.read("lang/cyrillic.png"))
        let latin = folder.write("phototest.tif", try Fixtures.read("tesseract-testdata/phototest.tif"))

        for language in ["auto", "eng"] {
            let ocr = try Run.ocrfarm(["ocr", "--lang", language, "--format", "json", cyrillic], environment: environment)
            #expect(ocr.status == 0, "\(ocr.stderr)")
            #expect(ocr.stderr.contains("warning: \(cyrillic): the page is in Cyrillic script") && ocr.stderr.contains("tesseract-ocr-rus"),
                    "--lang \(language): \(ocr.stderr)")
            let finding = try JSON.parse(Array(ocr.stdout))["pages"]?[0]?["stages"]?["missing_language"]
            #expect(finding?["package"]?.stringValue == "tesseract-ocr-rus" && finding?["script"]?.stringValue == "Cyrillic"
                    && finding?["read_with"]?.stringValue == "eng", "--lang \(language): \(finding ?? .null)")
        }
        let plain = try Run.ocrfarm(["ocr", "--lang", "auto", latin], environment: environment)
        #expect(plain.status == 0 && !plain.stderr.contains("warning"), "\(plain.stderr)")
        // An English receipt OSD calls Cyrillic (script confidence 3.8) reads as English: no warning.
        let receipt = folder.write("sroie-585.jpg", try Fixtures.read("lang/sroie-585.jpg"))
        let english = try Run.ocrfarm(["ocr", "--format", "json", receipt], environment: environment)
        #expect(english.status == 0 && !english.stderr.contains("warning"), "\(english.stderr)")
        let orient = try JSON.parse(Array(english.stdout))["pages"]?[0]?["stages"]?["orient"]
        #expect(orient?["script"]?.stringValue == "Cyrillic" && (orient?["script_confidence"]?.doubleValue ?? 0) >= 2,
                "the receipt no longer tests the case: \(orient ?? .null)")

        let store = folder.file("farm.db")
        let run = try Run.ocrfarm(["run", "--store", store, "--workers", "1", "--lang", "auto", cyrillic, latin], environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("warning: 1 page in Cyrillic script") && run.stderr.contains("apt-get install tesseract-ocr-rus"),
                "\(run.stderr)")

        let review = try Run.ocrfarm(["review", "--store", store])
        #expect(review.status == 0 && review.text.contains("warning: Cyrillic script") && review.text.contains("tesseract-ocr-rus"),
                "\(review.text)")
        let listed = try JSON.parse(Array(try Run.ocrfarm(["review", "--store", store, "--json", "--limit", "0"]).stdout))
        let pages = try #require(listed["pages"]?.arrayValue)
        try #require(pages.count == 2, "\(listed)")
        for page in pages {
            let missing = page["missing_language"]?["package"]?.stringValue
            #expect(page["document"]?.stringValue == "cyrillic.png" ? missing == "tesseract-ocr-rus" : missing == nil, "\(page)")
        }
    }
}
