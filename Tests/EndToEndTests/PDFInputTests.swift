import Foundation
import FarmCore
import FarmRender
import FarmRuntime
import Leptonica
import Testing
import TestSupport

/// PDFs made for the tests: a scan (our own PDF writer, the fixture page's image at 96 dpi) and a born-digital page
/// (Ghostscript's ps2pdf of a PostScript text page).
enum TestPDFs {
    /// The two-column fixture page at a third of its size (827×1170), placed as a 96 dpi image on an image-only page.
    static func scan(_ folder: TemporaryDirectory, name: String = "scan.pdf", archive: PDFAProfile? = nil) throws
        -> (path: String, width: Int, height: Int)
    {
        let page = try Pix(encoded: try FileSystem.read(Fixtures.path("pdf/two-columns.png")))
        let small = try page.scaled(toWidth: page.width / 3, height: page.height / 3)
        let compressed = try small.compressedForPDF()
        let filter: PDFImage.Filter = switch compressed.encoding {
        case .jpeg: .dct
        case .jpeg2000: .jpx
        case .group4: .ccittFax
        case .flate: .flate
        }
        let image = PDFImage(data: compressed.bytes, filter: filter, width: compressed.width, height: compressed.height,
                             bitsPerComponent: compressed.bitsPerComponent, components: compressed.components,
                             palette: compressed.palette, predictor: compressed.predictor)
        let pdf = SearchablePDF.imageOnly(image, resolution: 96, title: "scan", archive: archive) { _ in nil }
        return (folder.write(name, pdf), small.width, small.height)
    }

    static let bornDigitalLines = ["Quarterly report of the harbour office", "Shipments rose by eleven percent",
                                   "Invoices are archived for seven years"]

    /// A born-digital page with real text, made by Ghostscript from PostScript.
    static func bornDigital(_ folder: TemporaryDirectory) throws -> String {
        var postscript = "%!PS\n/Helvetica findfont 14 scalefont setfont\n"
        for (index, line) in bornDigitalLines.enumerated() { postscript += "72 \(700 - 24 * index) moveto (\(line)) show\n" }
        postscript += "showpage\n"
        let source = folder.write("text.ps", text: postscript)
        let output = folder.file("text.pdf")
        let run = try Run.process("/usr/bin/ps2pdf", [source, output])
        guard run.status == 0 else { throw StoreErrorText("ps2pdf failed: \(run.stderr)") }
        return output
    }

    /// The raw (undecoded) bytes of each content stream of page `page` (from 1), by `qpdf --show-pages` and
    /// `qpdf --show-object --raw-stream-data`.
    static func contentStreams(_ path: String, page: Int) throws -> [Data] {
        let pages = try Run.process("/usr/bin/qpdf", ["--show-pages", path]).text
        var ids: [String] = []
        var inPage = false, inContent = false
        for line in pages.split(separator: "\n") {
            if line.hasPrefix("page ") { inPage = line.hasPrefix("page \(page):"); inContent = false; continue }
            if inPage && line.trimmingCharacters(in: .whitespaces) == "content:" { inContent = true; continue }
            if inPage && inContent, let id = line.trimmingCharacters(in: .whitespaces).split(separator: " ").first {
                ids.append(String(id))
            }
        }
        return try ids.map { try Run.process("/usr/bin/qpdf", ["--show-object=\($0)", "--raw-stream-data", path]).stdout }
    }

    /// `pdftotext -bbox` words of a one-page PDF: text and box in points from the top left.
    static func words(_ path: String) throws -> [(text: String, x: Double, y: Double, maxX: Double, maxY: Double)] {
        let html = try Run.process("/usr/bin/pdftotext", ["-bbox", path, "-"]).text
        let pattern = try NSRegularExpression(pattern: #"<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>"#)
        return pattern.matches(in: html, range: NSRange(html.startIndex..., in: html)).map { match in
            func group(_ i: Int) -> String { String(html[Range(match.range(at: i), in: html)!]) }
            return (group(5), Double(group(1))!, Double(group(2))!, Double(group(3))!, Double(group(4))!)
        }
    }
}

struct StoreErrorText: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

@Suite("PDF in, PDF out (end to end, real Tesseract, poppler and qpdf)")
struct PDFInputTests {
    let folder = TemporaryDirectory("e2e-pdfin")
    let environment: [String: String?] = ["OMP_THREAD_LIMIT": "1"]

    @Test("a 96 dpi scan in a PDF is read at 96 dpi, and its PDF keeps the image and gets text at the words")
    func scan() throws {
        let scan = try TestPDFs.scan(folder)
        let json = try Run.ocrfarm(["ocr", scan.path, "--format", "json"], environment: environment)
        #expect(json.status == 0, "\(json.stderr)")
        let parsed = try JSON.parse(Array(json.stdout))
        let page = parsed["pages"]?.arrayValue?.first ?? parsed
        let decode = page["stages"]?["decode"]
        #expect(decode?["resolution"]?.intValue == 96, "\(json.text.prefix(600))")
        #expect(decode?["width"]?.intValue == scan.width && decode?["height"]?.intValue == scan.height)

        let out = folder.file("scan-ocr.pdf")
        let run = try Run.ocrfarm(["ocr", scan.path, "--format", "pdf", "--out", out], environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try Run.process("/usr/bin/qpdf", ["--check", out]).status == 0)
        // The page's own image, not a new one: same size, same resolution, one image.
        let images = try Run.process("/usr/bin/pdfimages", ["-list", out]).text.split(separator: "\n").dropFirst(2)
        #expect(images.count == 1, "\(images)")
        let fields = images.first.map { $0.split(separator: " ") } ?? []
        #expect(fields.count > 13 && fields[3] == "\(scan.width)" && fields[4] == "\(scan.height)" && fields[12] == "96", "\(images)")
        // The page's content streams are the original's, unchanged, inside ours.
        let before = try TestPDFs.contentStreams(scan.path, page: 1)
        let after = try TestPDFs.contentStreams(out, page: 1)
        #expect(!before.isEmpty && after.count == before.count + 2 && Array(after.dropFirst().prefix(before.count)) == before)
        // And PDF/A-2B (issue 36): the metadata added, nothing converted.
        let verdict = try Run.process("/usr/bin/python3", [Fixtures.packageRoot + "/Scripts/check-pdfa", out])
        #expect(verdict.status == 0, "\(verdict.text)")

        try expectWordsPlaced(page, in: out)
    }

    /// Every word pdftotext finds in `pdf` lies on a word the OCR found: the bounding box of its corners in the
    /// page's image ("original": in the rendering's pixels, when the stages scaled or turned the page; else its box),
    /// at 72/96 points per pixel, within 2 points on every side. pdftotext gives boxes on the page as shown.
    /// With `turnedUpright` (the width of the page as the file showed it, in pixels), the output shows the page
    /// turned clockwise by 270° (`/Rotate` made upright): the boxes are turned the same way, (x, y) → (y, width − x).
    func expectWordsPlaced(_ page: JSON, in out: String, turnedUpright: Double? = nil) throws {
        let words = (page["words"]?.arrayValue ?? []).compactMap { word -> (text: String, box: [Double])? in
            guard let text = word["text"]?.stringValue else { return nil }
            if let corners = word["original"]?.arrayValue?.compactMap({ $0.arrayValue?.compactMap(\.doubleValue) }), corners.count == 4 {
                let points = corners.map { corner in turnedUpright.map { [corner[1], $0 - corner[0]] } ?? corner }
                let xs = points.map { $0[0] }, ys = points.map { $0[1] }
                return (text, [xs.min()!, ys.min()!, xs.max()!, ys.max()!])
            }
            guard let box = word["box"]?.arrayValue?.compactMap(\.intValue), box.count == 4 else { return nil }
            return (text, [Double(box[0]), Double(box[1]), Double(box[0] + box[2]), Double(box[1] + box[3])])
        }
        let placed = try TestPDFs.words(out)
        #expect(placed.count >= words.count * 9 / 10 && words.count > 50, "\(placed.count) words in the PDF, \(words.count) read")
        let scale = 72.0 / 96
        var matched = 0
        for word in placed where words.contains(where: { read in
            read.text.contains(word.text) && zip(read.box.map { $0 * scale }, [word.x, word.y, word.maxX, word.maxY]).allSatisfy { abs($0 - $1) < 2 }
        }) {
            matched += 1
        }
        #expect(matched >= placed.count * 9 / 10, "\(matched) of \(placed.count) words placed on their OCR boxes")
    }

    @Test("a turned page (/Rotate 90) is turned upright (/Rotate 0, issue 36), its text where its words are shown")
    func turnedPage() throws {
        let scan = try TestPDFs.scan(folder)
        let turned = folder.file("turned.pdf")
        let rotate = try Run.process("/usr/bin/qpdf", ["--rotate=+90", scan.path, turned])
        #expect(rotate.status == 0, "\(rotate.stderr)")
        let json = try Run.ocrfarm(["ocr", turned, "--format", "json"], environment: environment)
        #expect(json.status == 0, "\(json.stderr)")
        let parsed = try JSON.parse(Array(json.stdout))
        let page = parsed["pages"]?.arrayValue?.first ?? parsed
        #expect(page["stages"]?["decode"]?["width"]?.intValue == scan.height, "rendered as shown, turned")
        #expect(page["stages"]?["orient"]?["rotation"]?.intValue == 270, "\(page["stages"]?["orient"].map { $0.rendered } ?? "")")
        let out = folder.file("turned-ocr.pdf")
        #expect(try Run.ocrfarm(["ocr", turned, "--format", "pdf", "--out", out], environment: environment).status == 0)
        func rotation(_ pdf: String) throws -> Int? {
            try Run.process("/usr/bin/pdfinfo", [pdf]).text.split(separator: "\n").first { $0.hasPrefix("Page rot:") }
                .flatMap { Int($0.dropFirst("Page rot:".count).trimmingCharacters(in: .whitespaces)) }
        }
        #expect(try rotation(out) == 0, "turned upright")
        try expectWordsPlaced(page, in: out, turnedUpright: Double(scan.height))
        // --skip orient leaves the page as the file shows it (Tesseract then reads the sideways lines poorly, so
        // where its words lie is not checked here).
        let kept = folder.file("turned-kept.pdf")
        #expect(try Run.ocrfarm(["ocr", turned, "--skip", "orient", "--format", "pdf", "--out", kept], environment: environment).status == 0)
        #expect(try rotation(kept) == 90)
    }

    @Test("a page ocrfarm read before: skip keeps it, redo replaces our text layer with a new one, force adds one")
    func redo() throws {
        let scan = try TestPDFs.scan(folder)
        let first = folder.file("first.pdf")
        #expect(try Run.ocrfarm(["ocr", scan.path, "--format", "pdf", "--out", first], environment: environment).status == 0)
        let once = try TestPDFs.contentStreams(first, page: 1)
        let wordsOnce = try TestPDFs.words(first).count
        // With force the page has both layers (two more streams); pdftotext drops text drawn twice on the same spot
        // (as for fake bold), so it still finds each word once.
        for (mode, streams, words) in [("skip", once.count, wordsOnce), ("redo", once.count, wordsOnce),
                                       ("force", once.count + 2, wordsOnce)] {
            let again = folder.file("again-\(mode).pdf")
            let run = try Run.ocrfarm(["ocr", first, "--pdf-text", mode, "--format", "pdf", "--out", again], environment: environment)
            #expect(run.status == 0, "\(mode): \(run.stderr)")
            let contents = try TestPDFs.contentStreams(again, page: 1)
            #expect(contents.count == streams, "\(mode): \(contents.count) content streams")
            // The page's own image drawing is kept in every mode.
            #expect(contents.contains(once[1]), "\(mode)")
            let found = try TestPDFs.words(again).count
            #expect(abs(found - words) <= words / 20, "\(mode): \(found) words, expected about \(words)")
        }
    }

    @Test("PDF/A: a PDF/A-2B source passes the checker with the text added; a plain one too (issue 36), but not with --pdf-type pdf")
    func conformance() throws {
        let checker = Fixtures.packageRoot + "/Scripts/check-pdfa"
        let archived = try TestPDFs.scan(folder, name: "archived.pdf", archive: try PDFAProfile.current().get())
        #expect(try Run.process(checker, [archived.path]).status == 0)
        let out = folder.file("archived-ocr.pdf")
        #expect(try Run.ocrfarm(["ocr", archived.path, "--format", "pdf", "--out", out], environment: environment).status == 0)
        let check = try Run.process(checker, [out])
        #expect(check.status == 0, "\(check.text)")
        #expect(try Run.process("/usr/bin/pdftotext", [out, "-"]).text.split(whereSeparator: \.isWhitespace).count > 50)

        let plain = try TestPDFs.scan(folder, name: "plain.pdf")
        #expect(try Run.process(checker, [plain.path]).status != 0)
        let plainOut = folder.file("plain-ocr.pdf")
        #expect(try Run.ocrfarm(["ocr", plain.path, "--format", "pdf", "--out", plainOut], environment: environment).status == 0)
        let made = try Run.process(checker, [plainOut])
        #expect(made.status == 0, "\(made.text)")
        let asked = folder.file("plain-asked.pdf")
        #expect(try Run.ocrfarm(["ocr", plain.path, "--format", "pdf", "--pdf-type", "pdf", "--out", asked],
                                environment: environment).status == 0)
        let root = try Run.process("/usr/bin/qpdf", ["--show-object=trailer", asked]).text
        #expect(try Run.process(checker, [asked]).status != 0, "no PDF/A claim: \(root)")
    }

    @Test("a born-digital page with --pdf-text skip: its content streams byte-identical (a plain PDF), its text the result")
    func bornDigitalSkip() throws {
        let source = try TestPDFs.bornDigital(folder)
        let out = folder.file("text-ocr.pdf")
        // As a plain PDF: PDF/A-2B would embed its font, which changes the page (PDFAFromPDFTests).
        let run = try Run.ocrfarm(["ocr", source, "--format", "pdf", "--pdf-type", "pdf", "--out", out], environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        let before = try TestPDFs.contentStreams(source, page: 1)
        let after = try TestPDFs.contentStreams(out, page: 1)
        #expect(!before.isEmpty && before == after)
        let text = try Run.ocrfarm(["ocr", source], environment: environment)
        #expect(text.status == 0)
        for line in TestPDFs.bornDigitalLines { #expect(text.text.contains(line), "\(text.text)") }
        // Its words have their boxes, in points from the top left: the PostScript set each line's baseline at
        // 700, 676, 652 points from the bottom of the 842-point page, starting 72 points from the left.
        let json = try Run.ocrfarm(["ocr", source, "--format", "json"], environment: environment)
        let page = try JSON.parse(Array(json.stdout))
        let words = (page["pages"]?.arrayValue?.first ?? page)["words"]?.arrayValue ?? []
        #expect(words.count == TestPDFs.bornDigitalLines.joined(separator: " ").split(separator: " ").count, "\(json.text)")
        let lineStarts = words.filter { $0["box"]?.arrayValue?.first?.intValue == 72 }.compactMap { $0["box"]?.arrayValue?.compactMap(\.intValue) }
        #expect(lineStarts.count == 3)
        for (box, baseline) in zip(lineStarts, [142, 166, 190]) {
            #expect(box.count == 4 && box[1] < baseline && baseline < box[1] + box[3] && box[3] <= 20, "\(box)")
        }
        let hocr = try Run.ocrfarm(["ocr", source, "--format", "hocr"], environment: environment)
        #expect(hocr.text.contains("ocrx_word") && hocr.text.contains(">harbour<"), "\(hocr.text)")
        // force reads it anyway and lays its text over the page's.
        let forced = try Run.ocrfarm(["ocr", source, "--pdf-text", "force", "--format", "json"], environment: environment)
        #expect(forced.status == 0, "\(forced.stderr)")
        let forcedJSON = try JSON.parse(Array(forced.stdout))
        let forcedPage = forcedJSON["pages"]?.arrayValue?.first ?? forcedJSON
        #expect(forcedPage["stages"]?["pdf_text"] == nil && forcedPage["stages"]?["decode"] != nil)
    }

    @Test("a farm keeps a born-digital page's own text, searchable, and its stored page PDF is the page itself")
    func farmSearch() throws {
        let source = try TestPDFs.bornDigital(folder)
        let store = folder.file("farm.db")
        let run = try Run.ocrfarm(["run", "--store", store, "--workers", "1", source], environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        let search = try Run.ocrfarm(["search", "--store", store, "harbour"], environment: environment)
        #expect(search.status == 0 && search.text.contains("text.pdf"), "\(search.text) \(search.stderr)")
        // Its keywords, from its own text (issue 36: born-digital documents had none).
        let keywords = try Run.ocrfarm(["keywords", "--store", store], environment: environment)
        #expect(keywords.status == 0, "\(keywords.stderr)")
        for word in ["harbour", "Shipments", "Invoices"] { #expect(keywords.text.contains(word), "\(keywords.text)") }
        #expect(!keywords.text.contains("no keywords"), "\(keywords.text)")
        let exported = folder.file("export")
        // As a plain PDF: PDF/A-2B would embed the page's font, changing its content (PDFAFromPDFTests).
        let export = try Run.ocrfarm(["export", "--store", store, "--out", exported, "--format", "pdf", "--pdf-type", "pdf"],
                                     environment: environment)
        #expect(export.status == 0, "\(export.stderr)")
        let files = (FileManager.default.enumerator(atPath: exported)?.allObjects as? [String]) ?? []
        let pdf = files.first { $0.hasSuffix(".pdf") }.map { exported + "/" + $0 }
        #expect(pdf != nil, "\(files)")
        if let pdf {
            let before = try TestPDFs.contentStreams(source, page: 1), after = try TestPDFs.contentStreams(pdf, page: 1)
            #expect(!before.isEmpty && before == after)
        }
    }

    @Test("encrypted and truncated PDFs fail with a code naming the file")
    func badPDFs() throws {
        let scan = try TestPDFs.scan(folder)
        let encrypted = folder.file("locked.pdf")
        let lock = try Run.process("/usr/bin/qpdf", ["--encrypt", "user", "owner", "256", "--", scan.path, encrypted])
        #expect(lock.status == 0, "\(lock.stderr)")
        let locked = try Run.ocrfarm(["ocr", encrypted], environment: environment)
        #expect(locked.status == 66 && locked.stderr.contains("\(encrypted): pdf-encrypted"), "\(locked.stderr)")

        let bytes = try FileSystem.read(scan.path)
        let truncated = folder.write("cut.pdf", Array(bytes.prefix(bytes.count / 2)))
        let cut = try Run.ocrfarm(["ocr", truncated, Fixtures.phototest], environment: environment)
        #expect(cut.status == 65 && cut.stderr.contains("\(truncated)") && cut.stderr.contains("pdf-failed"), "\(cut.stderr)")
        #expect(cut.text.contains("quick brown"), "the other file is still read")
    }

    @Test("inspect takes a PDF page, rendered at its image's resolution")
    func inspect() throws {
        let scan = try TestPDFs.scan(folder)
        let run = try Run.ocrfarm(["inspect", scan.path], environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.text.hasPrefix("\(scan.path): \(scan.width)x\(scan.height) "), "\(run.text)")
        let missing = try Run.ocrfarm(["inspect", scan.path, "--page", "3"], environment: environment)
        #expect(missing.status == 65 && missing.stderr.contains("pdf-failed"), "\(missing.stderr)")
    }

    @Test("a three-page PDF (scan, text, scan) comes out with three pages in order")
    func pageOrder() throws {
        let scan = try TestPDFs.scan(folder)
        let text = try TestPDFs.bornDigital(folder)
        let three = folder.file("three.pdf")
        let merge = try Run.process("/usr/bin/qpdf", ["--empty", "--pages", scan.path, text, scan.path, "--", three])
        #expect(merge.status == 0, "\(merge.stderr)")
        let out = folder.file("three-ocr.pdf")
        let run = try Run.ocrfarm(["ocr", three, "--format", "pdf", "--out", out, "--jobs", "2"], environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        let info = try Run.process("/usr/bin/pdfinfo", [out]).text
        #expect(info.split(separator: "\n").contains { $0.hasPrefix("Pages:") && $0.split(separator: " ").last == "3" }, "\(info)")
        let second = try Run.process("/usr/bin/pdftotext", ["-f", "2", "-l", "2", out, "-"]).text
        #expect(second.contains(TestPDFs.bornDigitalLines[0]), "\(second)")
        for page in [1, 3] {
            let read = try Run.process("/usr/bin/pdftotext", ["-f", "\(page)", "-l", "\(page)", out, "-"]).text
            #expect(read.split(whereSeparator: \.isWhitespace).count > 50, "page \(page): \(read.prefix(200))")
        }
        // PDF/A-2B (issue 36): the born-digital page's font embedded by Ghostscript, the scans untouched.
        let verdict = try Run.process("/usr/bin/python3", [Fixtures.packageRoot + "/Scripts/check-pdfa", out])
        #expect(verdict.status == 0, "\(verdict.text)")
    }
}
