import Testing
import Foundation
import FarmCore
import Leptonica
import TestSupport

/// Issue 19 item 2: a scan's PDF page shows the file's own image at its own resolution, losslessly (JPEG bytes as they
/// are, PNG and TIFF pixels exactly, bilevel as CCITT G4), and the text layer lies on the words of that image, also
/// when the page was turned or deskewed for reading; a photo shows its corrected page (`--pdf-image`).
@Suite("The original image kept in the PDF (end to end)")
struct PDFImageTests {
    static func tool(_ name: String, _ arguments: [String]) throws -> ProcessOutput {
        let path = try #require(Run.which(name), "\(name) is not installed")
        return try Run.process(path, arguments)
    }

    /// `ocr IMAGE --format pdf` (with `extra` options) into the folder, checked by qpdf and the PDF/A-2B checker.
    static func pdf(_ image: String, _ extra: [String] = [], in folder: TemporaryDirectory) throws -> String {
        let out = folder.file((image as NSString).lastPathComponent + ".pdf")
        let run = try Run.ocrfarm(["ocr", image, "--format", "pdf", "--out", out] + extra)
        #expect(run.status == 0, "\(run.stderr)")
        let qpdf = try tool("qpdf", ["--check", out])
        #expect(qpdf.status == 0, "\(qpdf.text) \(qpdf.stderr)")
        let pdfa = try tool("python3", [Fixtures.packageRoot + "/Scripts/check-pdfa", out])
        #expect(pdfa.status == 0, "\(pdfa.text) \(pdfa.stderr)")
        return out
    }

    /// The page object of `ocr IMAGE --format json`.
    static func json(_ image: String, _ extra: [String] = []) throws -> JSON {
        let run = try Run.ocrfarm(["ocr", image, "--format", "json"] + extra)
        #expect(run.status == 0, "\(run.stderr)")
        let object = try JSON.parse(run.text)
        return object["pages"]?[0] ?? object
    }

    /// The one image of `pdf`: its `pdfimages -list` encoding and the file `pdfimages` writes (`-all`: JPEG as its
    /// bytes; `-png`: decoded).
    static func image(of pdf: String, _ mode: String, in folder: TemporaryDirectory) throws -> (encoding: String, file: String) {
        let list = try tool("pdfimages", ["-list", pdf]).text.split(separator: "\n").dropFirst(2)
        #expect(list.count == 1, "\(list)")
        let encoding = list.first.map { String($0.split(separator: " ", omittingEmptySubsequences: true)[8]) } ?? ""
        let prefix = folder.file("extracted-\(mode)")
        #expect(try tool("pdfimages", [mode, pdf, prefix]).status == 0)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasPrefix("extracted-\(mode)-") }.sorted()
        return (encoding, folder.file(try #require(names.first)))
    }

    /// Whether two image files hold the same pixels (compared as RGB, so a palette, gray or bilevel image compares with
    /// its decoded PNG).
    static func samePixels(_ a: String, _ b: String) throws -> Bool {
        let first = try Pix(encoded: Array(try Data(contentsOf: URL(fileURLWithPath: a)))).rgb()
        let second = try Pix(encoded: Array(try Data(contentsOf: URL(fileURLWithPath: b)))).rgb()
        return first.hasSamePixels(as: second)
    }

    @Test("PNG gray, PNG RGB, a JPEG and a bilevel TIFF: pdfimages gives back the file's pixels (the JPEG's bytes), at its size")
    func pixelsKept() throws {
        let folder = TemporaryDirectory()
        let receipt = Fixtures.path("orientation/sroie-receipt.jpg")
        let gray = folder.write("gray.png", try Pix(encoded: Array(try Data(contentsOf: URL(fileURLWithPath: receipt))))
            .luminance().encoded(as: .png))
        let cases: [(image: String, encoding: String)] = [
            (gray, "image"), (Fixtures.path("orientation/pubtabnet-table.png"), "image"),
            (receipt, "jpeg"), (Fixtures.phototest, "ccitt"),
        ]
        for (image, expected) in cases {
            let pdf = try Self.pdf(image, in: folder)
            let decoded = try Self.image(of: pdf, "-png", in: folder)
            #expect(decoded.encoding == expected, "\(image)")
            #expect(try Self.samePixels(image, decoded.file), "\(image): the PDF's image is not the file's")
            if expected == "jpeg" {
                let copied = try Self.image(of: pdf, "-all", in: folder)
                #expect(try Data(contentsOf: URL(fileURLWithPath: copied.file)) == Data(contentsOf: URL(fileURLWithPath: image)),
                        "the JPEG's bytes are not the file's")
            }
            for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasPrefix("extracted-") {
                try FileManager.default.removeItem(atPath: folder.file(name))
            }
        }
    }

    /// `pdftotext -bbox` words of `pdf` (points from the top left) and the page's size.
    static func words(_ pdf: String) throws -> (width: Double, height: Double, words: [(text: String, box: [Double])]) {
        let html = try tool("pdftotext", ["-bbox", pdf, "-"]).text
        let number = #"([\d.]+)"#
        let page = try NSRegularExpression(pattern: #"<page width=""# + number + #"" height=""# + number + #"""#)
        let match = try #require(page.firstMatch(in: html, range: NSRange(html.startIndex..., in: html)))
        let field = { (m: NSTextCheckingResult, i: Int) in String(html[Range(m.range(at: i), in: html)!]) }
        let pattern = try NSRegularExpression(pattern: #"<word xMin=""# + number + #"" yMin=""# + number + #"" xMax=""# + number
                                                  + #"" yMax=""# + number + #"">([^<]*)</word>"#)
        let words = pattern.matches(in: html, range: NSRange(html.startIndex..., in: html)).map { m in
            (field(m, 5), (1...4).map { Double(field(m, $0))! })
        }
        return (Double(field(match, 1))!, Double(field(match, 2))!, words)
    }

    /// Of the JSON's words of three or more letters that pdftotext finds (`checked`), how many have the middle of their
    /// box in the original image (`original` corners, else `box`), turned counterclockwise by `quarterTurns` and
    /// scaled onto the page, inside pdftotext's box of that word (`placed`).
    static func placement(_ pdf: String, page: JSON, quarterTurns: Int, original: Bool = true) throws -> (placed: Int, checked: Int) {
        let found = try words(pdf)
        let size = page["original_size"]?.arrayValue?.compactMap(\.doubleValue) ?? []
        let (w, h) = original && size.count == 2 ? (size[0], size[1])
            : (page["width"]?.doubleValue ?? 1, page["height"]?.doubleValue ?? 1)
        let scale = found.width / (quarterTurns % 2 == 0 ? w : h)
        var placed = 0, checked = 0
        for word in page["words"]?.arrayValue ?? [] {
            guard let text = word["text"]?.stringValue, text.count >= 3 else { continue }
            var corners: [(Double, Double)] = []
            if original, let quad = word["original"]?.arrayValue {
                corners = quad.compactMap { $0.arrayValue.flatMap { $0.count == 2 ? ($0[0].doubleValue ?? 0, $0[1].doubleValue ?? 0) : nil } }
            } else if let box = word["box"]?.arrayValue?.compactMap(\.doubleValue), box.count == 4 {
                corners = [(box[0], box[1]), (box[0] + box[2], box[1] + box[3])]
            }
            guard !corners.isEmpty else { continue }
            let (x, y) = (corners.map(\.0).reduce(0, +) / Double(corners.count), corners.map(\.1).reduce(0, +) / Double(corners.count))
            let shown: (Double, Double) = switch quarterTurns % 4 {
            case 1: (y, w - x)
            case 2: (w - x, h - y)
            case 3: (h - y, x)
            default: (x, y)
            }
            let point = (shown.0 * scale, shown.1 * scale)
            let candidates = found.words.filter { $0.text == text.replacingOccurrences(of: "&", with: "&amp;") }
            guard !candidates.isEmpty else { continue }
            checked += 1
            if candidates.contains(where: { $0.box[0] - 1 <= point.0 && point.0 <= $0.box[2] + 1 && $0.box[1] - 1 <= point.1 && point.1 <= $0.box[3] + 1 }) {
                placed += 1
            }
        }
        return (placed, checked)
    }

    @Test("a turned scan: the image as the file has it, turned upright by a matrix (no /Rotate), the words on the original's words")
    func turnedScan() throws {
        let folder = TemporaryDirectory()
        let image = Fixtures.path("tesseract-testdata/phototest-rotated-R.png")
        let pdf = try Self.pdf(image, in: folder)
        let info = try Self.tool("pdfinfo", [pdf]).text
        // 480 x 640 pixels at 200 dpi, shown turned: 640 x 480 pixels wide, as 230.4 x 172.8 points.
        #expect(info.contains("Page size:       230.4 x 172.8 pts") && info.contains("Page rot:        0"), "\(info)")
        let decoded = try Self.image(of: pdf, "-png", in: folder)
        #expect(try Self.samePixels(image, decoded.file))
        let result = try Self.placement(pdf, page: try Self.json(image), quarterTurns: 1)
        #expect(result.checked >= 30 && Double(result.placed) >= 0.95 * Double(result.checked), "\(result)")
        // The text reads upright, in order.
        let text = try Self.tool("pdftotext", [pdf, "-"]).text
        #expect(text.hasPrefix("This is a lot of 12 point text to test the"), "\(text.prefix(200))")
    }

    @Test("a skewed scan (deskewed for reading): the image unrotated, each word's text on the skewed word")
    func skewedScan() throws {
        let folder = TemporaryDirectory()
        let skewed = try Pix(encoded: Array(try Data(contentsOf: URL(fileURLWithPath: Fixtures.phototest)))).rgb().luminance()
            .rotated(byDegrees: 3)
        skewed.setResolution(x: 200, y: 200)
        let image = folder.write("skewed.png", try skewed.encoded(as: .png))
        let pdf = try Self.pdf(image, in: folder)
        let page = try Self.json(image)
        let angle = page["stages"]?["deskew"]?["angle"]?.doubleValue ?? 0
        #expect(abs(abs(angle) - 3) < 0.5, "deskew found \(angle)°")
        let decoded = try Self.image(of: pdf, "-png", in: folder)
        #expect(try Self.samePixels(image, decoded.file))
        let result = try Self.placement(pdf, page: page, quarterTurns: 0)
        #expect(result.checked >= 30 && Double(result.placed) >= 0.95 * Double(result.checked), "\(result)")
        // Lines stay lines: pdftotext finds the words the JSON has, not pieces of them.
        let count = try Self.words(pdf).words.count
        #expect(count == page["words"]?.arrayValue?.count, "\(count) words in the PDF")
    }

    @Test("a photo shows its corrected page by default, the original with --pdf-image original; words on both")
    func photo() throws {
        let folder = TemporaryDirectory()
        let image = Fixtures.path("smartdoc15/background01_letter001_frame_0098.jpeg")
        // Tesseract: on this soft-focus frame it places 40 words, the neural engine (auto's choice: print enlarged 2.5×) 14.
        let tesseract = ["--engine", "tesseract"]
        let page = try Self.json(image, tesseract)
        #expect(page["stages"]?["rectify"]?["applied"]?.boolValue == true)
        let corrected = try Self.pdf(image, tesseract, in: folder)
        let rectified = try Self.placement(corrected, page: page, quarterTurns: 0, original: false)
        #expect(rectified.checked >= 10 && Double(rectified.placed) >= 0.9 * Double(rectified.checked), "\(rectified)")
        let copy = folder.file("photo.jpeg")
        try FileManager.default.copyItem(atPath: image, toPath: copy)
        let original = try Self.pdf(copy, ["--pdf-image", "original"] + tesseract, in: folder)
        let kept = try Self.image(of: original, "-all", in: folder)
        #expect(kept.encoding == "jpeg")
        #expect(try Data(contentsOf: URL(fileURLWithPath: kept.file)) == Data(contentsOf: URL(fileURLWithPath: image)))
        let onPhoto = try Self.placement(original, page: page, quarterTurns: 0)
        #expect(onPhoto.checked >= 10 && Double(onPhoto.placed) >= 0.9 * Double(onPhoto.checked), "\(onPhoto)")
    }
}
