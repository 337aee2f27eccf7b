import FarmCore
@testable import FarmIIIF
import FarmRuntime
import FarmStore
import Leptonica
import Testing
import TestSupport

/// A JPEG with EXIF orientation 6 (shown turned a quarter clockwise), submitted: stored 400 × 300 with a black
/// square in its top-left corner, shown 300 × 400 with the square top right.
struct TurnedJPEGStore {
    let folder = TemporaryDirectory("ocrfarm-exif")
    let source: SourceRef

    static func turnedJPEG() throws -> [UInt8] {
        var pixels = GrayPixels(width: 400, height: 300, data: [UInt8](repeating: 255, count: 400 * 300))
        for y in 0..<60 { for x in 0..<60 { pixels.data[y * 400 + x] = 0 } }
        let page = try Pix(gray: pixels)
        let jpeg = try page.encoded(as: .jpeg)
        // An APP1 Exif block with orientation 6 (little-endian TIFF) after SOI.
        let tiff: [UInt8] = [0x49, 0x49, 0x2A, 0x00, 0x08, 0x00, 0x00, 0x00, 0x01, 0x00,
                             0x12, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00,
                             0x00, 0x00, 0x00, 0x00]
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        let app1: [UInt8] = [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        return [jpeg[0], jpeg[1]] + app1 + Array(jpeg[2...])
    }

    init() throws {
        let path = folder.file("turned.jpg")
        try FileSystem.write(try Self.turnedJPEG(), to: path)
        let store = folder.file("farm.db")
        let submit = try Run.ocrfarm(["submit", "--store", store, path])
        try #require(submit.status == 0, "submit: \(submit.stderr)")
        let opened = try Store(path: store, readOnly: true)
        let document = try #require(try opened.documents(after: nil, limit: 1).first)
        let page = try #require(try opened.pages(of: document.id, after: 0, limit: 1).first)
        source = try #require(try opened.source(of: page.id))
    }
}

@Suite("Page images")
struct PageImagesTests {
    /// Whether `image` is the turned picture (300 × 400, or made smaller keeping its shape): the black square top
    /// right, white top left and bottom right.
    static func isShownTurned(_ image: Pix) -> Bool {
        let (w, h) = (image.width, image.height)
        return abs(w * 4 - h * 3) <= 8 && image.pixel(x: w * 9 / 10, y: h / 13) < 60 && image.pixel(x: w / 10, y: h / 13) > 200
            && image.pixel(x: w * 9 / 10, y: h * 9 / 10) > 200
    }

    static func corners(_ image: Pix) -> String {
        let (w, h) = (image.width, image.height)
        return "\(w)x\(h): top left \(image.pixel(x: w / 10, y: h / 13)), top right \(image.pixel(x: w * 9 / 10, y: h / 13)), "
            + "bottom right \(image.pixel(x: w * 9 / 10, y: h * 9 / 10))"
    }

    @Test("a JPEG past the browser image limit is shown turned by its EXIF orientation, as a small one is")
    func largeJPEGTurnedByEXIF() throws {
        let fixture = try TurnedJPEGStore()
        // The same path as a JPEG over 25 MP: a limit under this one's 120,000 pixels.
        var limits = RenderLimits()
        limits.maxPixels = 100_000
        let large = try PageImages(limits: limits).browserImage(of: PageID(1), source: fixture.source)
        #expect(large.mediaType == "image/jpeg")
        let shown = try Pix(encoded: large.bytes)
        #expect(Self.isShownTurned(shown), "\(Self.corners(shown))")
        #expect(large.width == shown.width && large.height == shown.height && large.width < large.height)
        // Within the limit the file itself, which the browser turns: its size is the turned one.
        let small = try PageImages().browserImage(of: PageID(1), source: fixture.source)
        #expect(small.bytes == (try TurnedJPEGStore.turnedJPEG()))
        #expect(small.width == 300 && small.height == 400)
    }

    @Test("IIIF's image and canvas size of a JPEG are the picture as shown (EXIF orientation applied)")
    func iiifTurnedByEXIF() throws {
        let fixture = try TurnedJPEGStore()
        let image = try PageImages().image(of: PageID(1), source: fixture.source)
        #expect(image.width == 300 && image.height == 400)
        #expect(Self.isShownTurned(image), "\(Self.corners(image))")
        let size = try PageImages.size(of: fixture.source)
        #expect(size.width == 300 && size.height == 400)
    }
}
