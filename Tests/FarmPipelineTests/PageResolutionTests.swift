import Testing
import FarmCore
import FarmPipeline
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
