import FarmRuntime
import Testing
import TestSupport

/// The one rasterizer of PDF pages, which the workers (at a resolution) and the page images (at a pixel size, within
/// limits) both call.
@Suite("PDF pages rasterized by pdftoppm")
struct PopplerRasterizerTests {
    let folder = TemporaryDirectory("ocrfarm-poppler-test")

    /// The width and height in a PNM header ("P5\n200 100\n255\n").
    func pnmSize(_ bytes: [UInt8]) -> (magic: String, width: Int, height: Int)? {
        let fields = String(decoding: bytes.prefix(40), as: UTF8.self).split(whereSeparator: \.isWhitespace)
        guard fields.count >= 3, let width = Int(fields[1]), let height = Int(fields[2]) else { return nil }
        return (String(fields[0]), width, height)
    }

    @Test("at a resolution: PGM when gray, PPM else, the page's box at that many dots per inch; the page asked for")
    func resolution() throws {
        // 144 × 72 pt and 72 × 36 pt: at 100 dpi 200 × 100 and 100 × 50 pixels.
        let pdf = folder.write("two.pdf", TestPDF.pages([(144, 72, 0), (72, 36, 0)]))
        let gray = try PopplerRasterizer.rasterize(pdf, page: 0, size: .resolution(dpi: 100, gray: true))
        let found = try #require(pnmSize(gray))
        #expect(found.magic == "P5" && found.width == 200 && found.height == 100, "\(found)")
        let color = try PopplerRasterizer.rasterize(pdf, page: 1, size: .resolution(dpi: 100, gray: false))
        let second = try #require(pnmSize(color))
        #expect(second.magic == "P6" && second.width == 100 && second.height == 50, "\(second)")
    }

    @Test("at a pixel size: a PNG of that size, within limits")
    func pixels() throws {
        let pdf = folder.write("one.pdf", TestPDF.pages([(400, 300, 0)]))
        let limits = PopplerRasterizer.Limits(seconds: 20, addressSpaceBytes: 1 << 30, niceness: 10)
        let png = try PopplerRasterizer.rasterize(pdf, page: 0, size: .pixels(width: 321, height: 123), limits: limits)
        #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        // IHDR: width and height, big-endian, at bytes 16 and 20.
        let word = { (at: Int) in png[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        #expect(abs(word(16) - 321) <= 1 && abs(word(20) - 123) <= 1, "\(word(16)) × \(word(20))")
    }

    @Test("a page past the end, or a file that is no PDF, fails with pdftoppm's exit status and its last words")
    func failures() throws {
        let pdf = folder.write("one.pdf", TestPDF.pages([(100, 100, 0)]))
        let notPDF = folder.write("text.pdf", Array("not a PDF at all".utf8))
        for (path, page) in [(pdf, 5), (notPDF, 0)] {
            let error = try #require(throws: PopplerRasterizer.Failure.self) {
                try PopplerRasterizer.rasterize(path, page: page, size: .resolution(dpi: 72, gray: true))
            }
            guard case .failed(let status, let said) = error else {
                Issue.record("\(path) page \(page): \(error)")
                continue
            }
            #expect(status != 0 || said != nil, "\(path) page \(page): \(error)")
        }
    }
}
