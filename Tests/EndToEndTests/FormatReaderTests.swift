import Testing
import FarmCore
import TestSupport
import Foundation

/// hOCR, ALTO, PAGE and JSON of real pages, read by the readers' own tools (Scripts/validators installs them):
/// hocr-spec and hocr-check, the ALTO 4.4 and PAGE 2019 XSDs, OCR-D's PageValidator with its coordinate checks,
/// hocr-tools' hocr-pdf and OCRmyPDF's hOCR renderer; outputs of `ocr` and of `export`.
@Suite("Formats as their readers read them (end to end)", .enabled(if: Capabilities.hasFormatValidators))
struct FormatReaderTests {
    struct Sample: Sendable, CustomTestStringConvertible {
        let name: String
        let image: String
        let languages: String
        /// Chinese: PAGE's text consistency is checked without regard to spaces (OCR-D joins words with one).
        var unspaced = false
        /// A photo: its lines are slanted, so their upright bounding boxes overlap (hocr-check's overlap test).
        var slanted = false
        var testDescription: String { name }
    }

    static let turned = Sample(name: "turned scan", image: Fixtures.path("tesseract-testdata/phototest-rotated-R.png"), languages: "eng")
    static let samples: [Sample] = [
        turned,
        Sample(name: "photo", image: Fixtures.path("smartdoc15/background01_letter001_frame_0098.jpeg"), languages: "eng",
               slanted: true),
        Sample(name: "Chinese", image: Fixtures.packageRoot + "/Samples/pages/cjk-000.png", languages: "chi_sim+eng",
               unspaced: true),
    ]

    /// Writes `ocr IMAGE --format FORMAT` into the folder as `page.FORMAT`.
    @discardableResult
    static func ocr(_ sample: Sample, _ format: String, into folder: TemporaryDirectory) throws -> String {
        let run = try Run.ocrfarm(["ocr", sample.image, "--lang", sample.languages, "--format", format])
        #expect(run.status == 0, "\(sample.name) \(format): \(run.stderr)")
        return folder.write("page.\(format)", [UInt8](run.stdout))
    }

    static func check(_ arguments: [String]) throws {
        let run = try FormatValidators.run(arguments)
        #expect(run.status == 0, "\(arguments.joined(separator: " ")): \(run.text)\(run.stderr)")
    }

    static func lines(_ format: String, _ file: String, in folder: TemporaryDirectory) throws -> [String] {
        let out = folder.file("\(format).lines")
        try check(["lines", format, file, out])
        return try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            .dropLast().map(String.init)
    }

    /// Checks the page's documents with the validators, and that every format spaces each line as the JSON does.
    static func validate(hocr: String, alto: String, page: String, json: String, _ sample: Sample, in folder: TemporaryDirectory) throws {
        try check(["hocr", hocr] + (sample.slanted ? ["--nooverlap"] : []))
        try check(["alto", alto])
        try check(["page", page] + (sample.unspaced ? ["--lax"] : []))
        let object = try JSON.parse(String(contentsOfFile: json, encoding: .utf8))
        let pageObject = object["pages"]?[0] ?? object
        // The formats leave out lines without words.
        let expected = pageObject["lines"]?.arrayValue?.compactMap { $0["text"]?.stringValue }.filter { !$0.isEmpty } ?? []
        #expect(!expected.isEmpty)
        for (format, file) in [("hocr", hocr), ("alto", alto), ("page", page)] {
            let found = try lines(format, file, in: folder)
            #expect(found == expected, "\(sample.name): \(format) lines differ from the JSON's")
        }
    }

    @Test("ocr: hOCR, ALTO and PAGE pass their validators (PageValidator's coordinates too); lines spaced as in JSON",
          arguments: samples)
    func ocrOutputs(sample: Sample) throws {
        let folder = TemporaryDirectory()
        let files = try ["hocr", "alto", "page", "json"].map { try Self.ocr(sample, $0, into: folder) }
        try Self.validate(hocr: files[0], alto: files[1], page: files[2], json: files[3], sample, in: folder)
        if sample.unspaced {
            // The Chinese sample's text has runs of Chinese without spaces, and hOCR's words are not spaced apart there.
            let text = try String(contentsOfFile: files[0], encoding: .utf8)
            #expect(!text.contains("</span> <span class='ocrx_word' id='word_1_2'"), "no space between the first two Chinese words")
        }
    }

    @Test("a turned scan: textangle, ROTATION and orientation; scan_res of the original; readers lay the text in our order")
    func turnedScan() throws {
        let folder = TemporaryDirectory()
        let sample = Self.turned
        let hocr = try Self.ocr(sample, "hocr", into: folder)
        let ours = try Self.ocr(sample, "text", into: folder)
        let hocrText = try String(contentsOfFile: hocr, encoding: .utf8)
        // The scan was turned a quarter clockwise: its lines run down the image (270° counterclockwise).
        #expect(hocrText.contains("; textangle 270'"), "\(hocrText.prefix(1500))")
        // Its PNG says 200 dpi; the boxes are in its pixels.
        #expect(hocrText.contains("bbox 0 0 480 640; ppageno 0; scan_res 200 200'"))
        let alto = try String(contentsOfFile: Self.ocr(sample, "alto", into: folder), encoding: .utf8)
        #expect(alto.contains("HEIGHT=\"640\" ROTATION=\"270\">"))
        let page = try String(contentsOfFile: Self.ocr(sample, "page", into: folder), encoding: .utf8)
        #expect(page.contains("imageHeight=\"640\" orientation=\"-90\">") && page.contains("orientation=\"-90\" type=\"paragraph\""))

        // OCRmyPDF's renderer reads textangle and scan_res: pdftotext reads its text layer in our order.
        let laidOut = folder.file("ocrmypdf.txt")
        try Self.check(["ocrmypdf-hocr", hocr, laidOut])
        #expect(try Self.orderRatio(ours, laidOut) >= 0.95)
        // hocr-pdf (hocr-tools) ignores textangle and sets every word flat; the words it writes are ours, in our order.
        let written = folder.file("hocr-pdf.txt")
        try Self.check(["hocr-pdf", hocr, sample.image, written])
        #expect(try Self.orderRatio(ours, written) >= 0.95)
    }

    static func orderRatio(_ a: String, _ b: String) throws -> Double {
        let run = try FormatValidators.run(["order", a, b])
        #expect(run.status == 0, "\(run.stderr)")
        let ratio = Double(run.text.split(separator: "\n").first.map(String.init) ?? "") ?? 0
        return ratio
    }

    @Test("export: the files pass the validators, point at the page image from the export folder, and the JSON is ocr's")
    func exported() throws {
        let folder = TemporaryDirectory()
        let store = folder.file("farm.db")
        let images = folder.file("scans")
        try FileManager.default.createDirectory(atPath: images, withIntermediateDirectories: true)
        let samples = [Self.turned, Self.samples[2]]
        for (index, sample) in samples.enumerated() {
            let copy = images + "/\(index)-" + (sample.image as NSString).lastPathComponent
            try FileManager.default.copyItem(atPath: sample.image, toPath: copy)
            let run = try Run.ocrfarm(["run", "--store", store, "--workers", "1", "--lang", sample.languages,
                                       "--document", sample.name, copy])
            #expect(run.status == 0, "\(run.stderr)")
        }
        let out = folder.file("export")
        let export = try Run.ocrfarm(["export", "--store", store, "--out", out, "--format", "hocr,alto,page,json"])
        #expect(export.status == 0, "\(export.stderr)")
        for sample in samples {
            let pages = out + "/" + sample.name
            let hocr = pages + "/0001.hocr", alto = pages + "/0001.alto.xml", page = pages + "/0001.page.xml"
            let json = pages + "/0001.json"
            try Self.validate(hocr: hocr, alto: alto, page: page, json: json, sample, in: folder)
            // The image each file names is there, seen from the folder the file is in.
            let references = [
                (hocr, #"image \"([^\"]+)\""#), (alto, #"<fileName>([^<]+)</fileName>"#), (page, #"imageFilename=\"([^\"]+)\""#),
            ]
            for (file, pattern) in references {
                let text = try String(contentsOfFile: file, encoding: .utf8)
                let match = try #require(text.firstMatch(of: try Regex(pattern)), "\(file) names no image")
                let name = String(try #require(match.output[1].substring))
                #expect(!name.hasPrefix("/") && FileManager.default.fileExists(atPath: pages + "/" + name), "\(file): \(name)")
            }
            // One JSON page object: ocr's, with the same version and fields.
            let stored = try JSON.parse(String(contentsOfFile: json, encoding: .utf8))
            let ocrJSON = try JSON.parse(String(decoding: Run.ocrfarm(["ocr", sample.image, "--lang", sample.languages,
                                                                       "--format", "json"]).stdout, as: UTF8.self))
            let fresh = try #require(ocrJSON["pages"]?[0])
            #expect(stored["version"]?.intValue == 1 && fresh["version"]?.intValue == 1)
            #expect(stored.objectValue?.map(\.0) == fresh.objectValue?.map(\.0), "the same fields in the same order")
        }
    }
}
