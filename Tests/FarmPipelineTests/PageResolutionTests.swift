import Testing
import FarmCore
import FarmPipeline
import FarmRuntime
import Leptonica
import TestSupport
import Foundation

/// The resolution that sets a PDF page's size, when the file gives none or a wrong one.
@Suite("Page resolution without a trusted DPI")
struct PageResolutionTests {
    /// Line heights of body text at `dpi` (0.14 inch ascender to descender), with a heading.
    static func lines(at dpi: Double, count: Int = 20) -> [Int] {
        Array(repeating: Int((0.14 * dpi).rounded()), count: count) + [Int(0.3 * dpi)]
    }

    @Test("a file's resolution is kept when it makes a page of paper size")
    func declared() {
        let chosen = PageResolution.choose(width: 2480, height: 3508, declared: 300, lineHeights: Self.lines(at: 300))
        #expect(chosen.source == .file && chosen.dpi == 300)
    }

    @Test("an A4 scan with no resolution, or a screen default of 96, is an A4 page")
    func a4() {
        for declared in [0, 72, 96] {
            let chosen = PageResolution.choose(width: 2480, height: 3508, declared: declared, lineHeights: Self.lines(at: 300))
            #expect(chosen.source == .paper, "declared \(declared)")
            #expect(abs(2480 / chosen.dpi - 8.27) < 0.01, "8.27 inches wide, not \(2480 / chosen.dpi)")
        }
        // Landscape, and Letter.
        let landscape = PageResolution.choose(width: 3508, height: 2480, declared: 0, lineHeights: [])
        #expect(landscape.source == .paper && abs(3508 / landscape.dpi - 11.69) < 0.01)
        let letter = PageResolution.choose(width: 1700, height: 2200, declared: 0, lineHeights: Self.lines(at: 200))
        #expect(letter.source == .paper && abs(letter.dpi - 200) < 0.5)
    }

    @Test("the text size tells A5 at 300 dpi from A4 at 212, and sizes a page of no paper shape")
    func textSize() {
        let a5 = PageResolution.choose(width: 1748, height: 2480, declared: 0, lineHeights: Self.lines(at: 300))
        #expect(a5.source == .paper && abs(1748 / a5.dpi - 5.83) < 0.01, "\(a5)")
        let a4 = PageResolution.choose(width: 1748, height: 2480, declared: 0, lineHeights: Self.lines(at: 212))
        #expect(a4.source == .paper && abs(1748 / a4.dpi - 8.27) < 0.01, "\(a4)")
        let receipt = PageResolution.choose(width: 900, height: 2600, declared: 0, lineHeights: Self.lines(at: 290))
        #expect(receipt.source == .text && receipt.dpi == 300, "rounded to a scanner's setting: \(receipt)")
        let nothing = PageResolution.choose(width: 900, height: 2600, declared: 0, lineHeights: [])
        #expect(nothing.source == .fallback && nothing.dpi == 300)
        let given = PageResolution.choose(width: 900, height: 2600, declared: 150, lineHeights: [], option: 150)
        #expect(given.source == .option && given.dpi == 150)
    }

    @Test("a guess makes a page between a business card and A0; weak text evidence gives 300 dpi of the file and says why")
    func plausibleSize() {
        // Issue 36's page (dibco2011-pr1.png as read, enlarged 2.5×): four Fraktur lines, the engine's "lines" merged
        // pairs of them, implied 1134 dpi of the file, a 3.1 × 0.8 cm page.
        let merged = PageResolution.choose(width: 3453, height: 920, declared: 0, lineHeights: [519, 388, 216, 150], scale: 2.5)
        #expect(merged.source == .fallback && merged.bound == nil, "\(merged)")
        #expect(abs(merged.dpi - 750) < 0.01, "300 dpi of the file is 750 of the page enlarged 2.5×: \(merged)")
        #expect(merged.why?.contains("outside a business card to A0") == true, "\(merged)")
        // Text that makes a plausible page is still taken (a strip of receipt at 200 dpi).
        let strip = PageResolution.choose(width: 1400, height: 500, declared: 0, lineHeights: Self.lines(at: 200))
        #expect(strip.source == .text && strip.dpi == 200, "\(strip)")
        // A crop of a few words: 300 dpi would be 2 cm wide; it is given a business card's long side.
        let word = PageResolution.choose(width: 240, height: 60, declared: 0, lineHeights: [])
        #expect(word.source == .fallback && word.bound == "business card", "\(word)")
        #expect(abs(240 / word.dpi - 85 / 25.4) < 0.001, "\(word)")
        // A huge image without a word: 300 dpi would be 169 cm long; it fits A0.
        let huge = PageResolution.choose(width: 20_000, height: 9_000, declared: 0, lineHeights: [])
        #expect(huge.source == .fallback && huge.bound == "A0", "\(huge)")
        #expect(abs(20_000 / huge.dpi - 1189 / 25.4) < 0.001, "\(huge)")
        // Text implying a page larger than A0 (a poster's lines taken as body text) is weak too.
        let poster = PageResolution.choose(width: 6000, height: 1000, declared: 0, lineHeights: Array(repeating: 12, count: 8))
        #expect(poster.source == .fallback && poster.dpi == 300 && poster.why != nil, "\(poster)")
    }

    @Test("end to end: issue 36's 1381 × 368 scan without a resolution is a page of 300 dpi, not a postage stamp")
    func mergedLinesScan() throws {
        let page = try PageProcessor(engine: .page).process(.image(Fixtures.read("resolution/dibco2011-pr1.png"), index: 0),
                                                             options: PageOptions(languages: ["eng"]), outputs: [.pdf])
        let finding = try #require(page.result.findings["resolution"], "\(page.result.findings)")
        #expect(finding["source"]?.stringValue == "fallback" && finding["dpi"]?.doubleValue == 300, "\(finding)")
        #expect(finding["why"]?.stringValue?.isEmpty == false, "\(finding)")
        let pdf = try #require(page.renderings.first { $0.format == .pdf }?.bytes)
        let folder = TemporaryDirectory("merged-lines")
        let path = folder.file("page.pdf")
        try FileSystem.write(pdf, to: path)
        let info = try Run.process("/usr/bin/pdfinfo", [path]).text
        let line = try #require(info.split(separator: "\n").first { $0.hasPrefix("Page size:") }, "\(info)")
        let points = line.split(separator: " ").compactMap { Double($0) }
        try #require(points.count >= 2, "\(line)")
        // 1381 × 368 pixels at 300 dpi: 4.60 × 1.23 inches (it was 1.22 × 0.32).
        #expect(abs(points[0] / 72 - 1381.0 / 300) < 0.05 && abs(points[1] / 72 - 368.0 / 300) < 0.05, "\(line)")
    }

    @Test("end to end: an A4 PNG without a resolution becomes an A4 PDF page; --image-dpi sets it")
    func pdfPageSize() throws {
        let folder = TemporaryDirectory("resolution")
        // An A4 page scanned at 180 dpi (1488 pixels wide) in a PNG that does not say so: read as 300 dpi, it
        // was a page 5 inches wide.
        let page = try Pix(contentsOfFile: Fixtures.packageRoot + "/Samples/pages/clean-000.png").scaled(by: 0.6)
        page.setResolution(x: 0, y: 0)
        let path = folder.file("no-dpi.png")
        try FileSystem.write(try page.encoded(as: .png), to: path)
        /// The PDF page's size in inches.
        func size(_ arguments: [String]) throws -> (width: Double, height: Double) {
            let out = folder.file("out.pdf")
            let ocr = try Run.ocrfarm(["ocr", "--format", "pdf", "--out", out, path] + arguments, environment: ["OMP_THREAD_LIMIT": "1"])
            try #require(ocr.status == 0, "\(ocr.stderr)")
            let info = try Run.process("/usr/bin/pdfinfo", [out]).text
            let line = try #require(info.split(separator: "\n").first { $0.hasPrefix("Page size:") }, "\(info)")
            let numbers = line.split(separator: " ").compactMap { Double($0) }
            try #require(numbers.count >= 2, "\(line)")
            return (numbers[0] / 72, numbers[1] / 72)
        }
        // A4 is 8.27 x 11.69 inches (the page may lose a few pixels to the stages).
        let inferred = try size([])
        #expect(abs(inferred.width - 8.27) < 0.05 && abs(inferred.height - 11.69) < 0.05, "\(inferred)")
        // 1488 pixels at 200 dpi: 7.44 inches.
        let given = try size(["--image-dpi", "200"])
        #expect(abs(given.width - 7.44) < 0.1, "\(given)")
    }
}
