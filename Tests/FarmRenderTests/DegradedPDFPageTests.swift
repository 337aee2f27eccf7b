import Testing
import Foundation
import FarmCore
import TestSupport
@testable import FarmRender

/// The two pages an export puts where a page failed for good: its image alone, and a placeholder that says why.
/// Checked with the real tools a reader of the export uses: qpdf, pdftotext, pdfimages (poppler).
@Suite("SearchablePDF degraded pages")
struct DegradedPDFPageTests {
    let folder = TemporaryDirectory()

    func tool(_ name: String, _ arguments: [String]) throws -> ProcessOutput {
        let path = try #require(Run.which(name), "\(name) is not installed")
        return try Run.process(path, arguments)
    }

    @Test("a placeholder page passes qpdf --check, and pdftotext finds its reason, delimiters and Latin-1 intact")
    func placeholder() throws {
        let reason = "timeout: gave up after 30 s (slot given up) \\ back-slash; café ∑ end"
        let pdf = SearchablePDF.placeholder(["ocrfarm: page 7 of a book could not be read.", "Page 7 failed for good: " + reason,
                                             String(repeating: "long-word-", count: 20)],
                                            title: "book page 7", compress: { _ in nil })
        let path = folder.write("placeholder.pdf", pdf)
        let check = try tool("qpdf", ["--check", path])
        #expect(check.status == 0, "\(check.text) \(check.stderr)")
        #expect(try tool("qpdf", ["--show-npages", path]).text == "1\n")
        let text = try tool("pdftotext", ["-layout", path, "-"]).text
        let joined = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        // Characters the standard font cannot show become "?"; everything else reads back as written.
        #expect(joined.contains("Page 7 failed for good: timeout: gave up after 30 s (slot given up) \\ back-slash; café ? end"), "\(text)")
        #expect(text.split(separator: "\n").allSatisfy { $0.count <= 90 }, "long lines are wrapped: \(text)")
        #expect(text.replacingOccurrences(of: "\n", with: "").contains(String(repeating: "long-word-", count: 8)))
    }

    @Test("an image-only page shows its image at the declared resolution and has no text")
    func imageOnly() throws {
        // A 40 x 20 gray image as flate data: a zlib stream of stored blocks, built here (FarmRender links no zlib).
        let pixels = [UInt8]((0..<(40 * 20)).map { UInt8($0 % 256) })
        let image = PDFImage(data: Self.storedZlib(pixels), filter: .flate, width: 40, height: 20, bitsPerComponent: 8,
                             colorSpace: "/DeviceGray")
        let path = folder.write("image.pdf", SearchablePDF.imageOnly(image, resolution: 200, title: "t", compress: { _ in nil }))
        let check = try tool("qpdf", ["--check", path])
        #expect(check.status == 0, "\(check.text) \(check.stderr)")
        #expect(try tool("pdftotext", [path, "-"]).text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
        let images = try tool("pdfimages", ["-list", path]).text.split(separator: "\n").dropFirst(2)
        #expect(images.count == 1)
        let columns = try #require(images.first).split(separator: " ")
        #expect(columns[3] == "40" && columns[4] == "20" && columns[12] == "200", "\(columns)")
        let info = try tool("pdfinfo", [path]).text
        #expect(info.split(separator: "\n").contains { $0.hasPrefix("Page size:") && $0.hasSuffix(" 14.4 x 7.2 pts") }, "\(info)")
    }

    @Test("wrapping cuts at spaces, splits a word longer than a line, keeps an empty line")
    func wrapping() {
        #expect(SearchablePDF.wrapped("aa bb cc", limit: 5) == ["aa bb", "cc"])
        #expect(SearchablePDF.wrapped("abcdefghij k", limit: 4) == ["abcd", "efgh", "ij k"])
        #expect(SearchablePDF.wrapped("", limit: 4) == [""])
        #expect(SearchablePDF.latin1String("a(b)\\é\u{1}") == "a\\(b\\)\\\\\\351?")
    }

    /// `bytes` as a zlib stream of stored (uncompressed) blocks, with its Adler-32.
    static func storedZlib(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65_535, bytes.count - offset)
            let last: UInt8 = offset + count == bytes.count ? 1 : 0
            out += [last, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += bytes[offset..<offset + count]
            offset += count
        } while offset < bytes.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in bytes { a = (a + UInt32(byte)) % 65_521; b = (b + a) % 65_521 }
        let adler = b << 16 | a
        return out + [UInt8(adler >> 24), UInt8(adler >> 16 & 0xFF), UInt8(adler >> 8 & 0xFF), UInt8(adler & 0xFF)]
    }
}
