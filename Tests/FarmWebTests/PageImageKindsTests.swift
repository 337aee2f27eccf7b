import Testing
import FarmCore
import FarmRuntime
import FarmStore
import TestSupport
import Foundation

/// The pixel size and type of a PNG (IHDR) or JPEG (the first SOF marker); nil for anything else.
func browserImageSize(_ bytes: [UInt8]) -> (type: String, width: Int, height: Int)? {
    func big(_ at: Int, _ count: Int) -> Int { (at..<at + count).reduce(0) { $0 << 8 | Int(bytes[$1]) } }
    if bytes.count > 24 && bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
        return ("png", big(16, 4), big(20, 4))
    }
    guard bytes.count > 4 && bytes.starts(with: [0xFF, 0xD8]) else { return nil }
    var at = 2
    while at + 9 < bytes.count, bytes[at] == 0xFF {
        let marker = bytes[at + 1]
        if (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC {
            return ("jpeg", big(at + 7, 2), big(at + 5, 2))
        }
        at += 2 + big(at + 2, 2)
    }
    return nil
}

@Suite("Page images for the browser (issue 36)", .serialized)
struct PageImageKindsTests {
    /// Issue 36, item 2: `/api/pages/N/image` answered 404 for a PDF page, `image/tiff` for a TIFF frame (which no
    /// browser shows) and the raw bytes of a JPEG 2000 file. Now each is a PNG or JPEG of the page's own pixels, by
    /// IIIF's bounded renderer; a PNG or JPEG source is still its own file.
    @Test("PDF pages, every TIFF frame and JPEG 2000 are served as PNG or JPEG of their size; PNG as submitted; 25 MP cap")
    func everyKind() throws {
        let folder = TemporaryDirectory("page-image-kinds")
        let store = folder.file("farm.db")
        let pdf = folder.file("pages.pdf")
        // 200 × 100 pt, a 100 × 200 pt page turned by /Rotate 90, and a 2000 × 2000 pt page (69 million pixels at
        // 300 dpi): not read yet, so shown at 300 dpi, the last made smaller to fit 25 million pixels.
        try FileSystem.write(TestPDF.pages([(200, 100, 0), (100, 200, 90), (2000, 2000, 0)]), to: pdf)
        let tiff = folder.file("three.tif")
        try FileSystem.write(try Fixtures.read("volume/three-pages.tif"), to: tiff)
        let jp2 = folder.file("page.jp2")
        try FileSystem.write(try Fixtures.read("formats/page.jp2"), to: jp2)
        let png = Fixtures.packageRoot + "/Samples/pages/clean-000.png"
        let changing = folder.file("changing.tif")
        try FileSystem.write(try Fixtures.read("formats/g4.tif"), to: changing)
        let submit = try Run.ocrfarm(["submit", "--store", store, pdf, tiff, jp2, png, changing])
        try #require(submit.status == 0, "submit: \(submit.stderr)")

        let opened = try Store(path: store, readOnly: true)
        var pages: [String: [Int64]] = [:]
        for document in try opened.documents(after: nil, limit: 10) {
            let name = String(document.name.split(separator: "/").last ?? "")
            pages[name] = try opened.pages(of: document.id, after: 0, limit: 10).map(\.id.rawValue)
        }
        let served = try Served(store: store, log: folder.file("serve.log"))
        func image(_ id: Int64?) throws -> (type: String, width: Int, height: Int, header: String?, data: [UInt8]) {
            let id = try #require(id)
            // A minute's wait: the third PDF page (69 MP, rendered down to 25 MP) takes 9 s alone, more under load.
            let answer = try served.call("/api/pages/\(id)/image", wait: 60)
            try #require(answer.status == 200, "page \(id): \(answer.status) \(answer.body.prefix(300))")
            let size = try #require(browserImageSize(answer.data), "page \(id): not PNG or JPEG: \(answer.head)")
            #expect(answer.header("Content-Type") == "image/" + size.type, "page \(id): \(answer.head)")
            return (size.type, size.width, size.height, answer.header("Content-Type"), answer.data)
        }

        let pdfPages = try #require(pages["pages.pdf"])
        try #require(pdfPages.count == 3)
        let first = try image(pdfPages[0])
        #expect(first.width == 833 && first.height == 416, "200 × 100 pt at 300 dpi: \(first.width) × \(first.height)")
        let turned = try image(pdfPages[1])
        #expect(turned.width == 833 && turned.height == 416, "turned by /Rotate 90: \(turned.width) × \(turned.height)")
        let big = try image(pdfPages[2])
        #expect(abs(big.width - 5000) <= 1 && abs(big.height - 5000) <= 1, "made to fit 25 MP: \(big.width) × \(big.height)")

        // Every frame of the TIFF, each its own size (the third is another page): bilevel, so PNG.
        let frames = try #require(pages["three.tif"])
        try #require(frames.count == 3)
        for (index, expected) in [(640, 480), (640, 480), (1024, 800)].enumerated() {
            let frame = try image(frames[index])
            #expect(frame.type == "png" && frame.width == expected.0 && frame.height == expected.1,
                    "frame \(index + 1): \(frame.type) \(frame.width) × \(frame.height)")
        }
        let jpeg2000 = try image(pages["page.jp2"]?.first)
        #expect(jpeg2000.type == "jpeg" && jpeg2000.width == 640 && jpeg2000.height == 120, "\(jpeg2000.type) \(jpeg2000.width) × \(jpeg2000.height)")
        // A PNG is its own file, byte for byte.
        let original = try image(pages["clean-000.png"]?.first)
        #expect(original.data == (try FileSystem.read(png)))

        // A page whose file changed since submit is refused, naming why.
        try FileSystem.write(try Fixtures.read("tesseract-testdata/phototest.tif"), to: changing)
        let changed = try served.call("/api/pages/\(try #require(pages["changing.tif"]?.first))/image")
        #expect(changed.status == 409 && changed.body.contains("changed since it was submitted"), "\(changed.status) \(changed.body)")
    }
}
