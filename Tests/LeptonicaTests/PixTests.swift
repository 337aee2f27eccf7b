import Testing
import Leptonica
import TestSupport

@Suite("Leptonica images")
struct PixTests {
    let phototest: Pix

    init() throws { phototest = try Pix(contentsOfFile: Fixtures.phototest) }

    @Test("decodes a real bilevel TIFF with its size, depth and resolution")
    func decodesTIFF() throws {
        #expect(phototest.width == 640)
        #expect(phototest.height == 480)
        #expect(phototest.depth == 1)
        #expect(phototest.inputFormat.isTIFF)
        let bytes = try Fixtures.read("tesseract-testdata/phototest.tif")
        let header = try Pix.header(of: bytes)
        #expect(header.width == 640 && header.height == 480)
        #expect(ImageFormat.sniff(bytes).isTIFF)
    }

    @Test("round-trips through every format the library was built with", arguments: [
        ImageFormat.png, .jpeg, .tiff(.none), .tiff(.lzw), .tiff(.zip), .pnm, .bmp, .webp, .jpeg2000, .gif,
    ])
    func roundTrip(format: ImageFormat) throws {
        let gray = try phototest.grayscale()
        let encoded = try gray.encoded(as: format)
        #expect(ImageFormat.sniff(encoded) == format || (format.isTIFF && ImageFormat.sniff(encoded).isTIFF))
        let decoded = try Pix(encoded: encoded)
        #expect(decoded.width == 640)
        #expect(decoded.height == 480)
        let header = try Pix.header(of: encoded)
        #expect(header.width == 640 && header.height == 480)
        let lossless: [ImageFormat] = [.png, .tiff(.none), .tiff(.lzw), .tiff(.zip), .pnm, .bmp]
        if lossless.contains(format) {
            #expect(try decoded.grayscale().hasSamePixels(as: gray))
        }
    }

    @Test("G4 TIFF keeps a bilevel image exactly")
    func g4() throws {
        let encoded = try phototest.encoded(as: .tiff(.g4))
        let decoded = try Pix(encoded: encoded)
        #expect(decoded.depth == 1)
        #expect(decoded.hasSamePixels(as: phototest))
        #expect(try Pix.header(of: encoded).format == .tiff(.g4))
    }

    @Test("a multi-page TIFF gives each page by index and counts them")
    func multipage() throws {
        let small = try phototest.scaled(by: 0.5)
        let bytes = try Pix.multipageTIFF([phototest, small, phototest])
        #expect(Pix.pageCount(of: bytes) == 3)
        #expect(try Pix(encoded: bytes, page: 1).width == 320)
        #expect(try Pix(encoded: bytes, page: 2).width == 640)
        #expect(try Pix.header(of: bytes, page: 1).width == 320)
        #expect(throws: LeptonicaError.self) { try Pix(encoded: bytes, page: 3) }
        #expect(Pix.pageCount(of: try phototest.encoded(as: .png)) == 1)
    }

    @Test("16-bit gray and RGB images are converted to what OCR needs")
    func depths() throws {
        let deep = try Pix(width: 40, height: 30, depth: 16)
        // Leptonica strips 16-bit PNG to 8 bits on reading; TIFF keeps 16 bits and grayscale() reduces them.
        #expect(try Pix(encoded: try deep.encoded(as: .png)).depth == 8)
        let tiff = try Pix(encoded: try deep.encoded(as: .tiff(.zip)))
        #expect(tiff.depth == 16)
        #expect(try tiff.grayscale().depth == 8)

        let rgb = try phototest.rgb()
        #expect(rgb.depth == 32)
        let gray = try rgb.grayscale()
        #expect(gray.depth == 8)
        #expect(gray.pixel(x: 0, y: 0) == 255)
    }

    @Test("the header of a PNG declaring 50000×50000 is read without decoding, and the limit refuses it")
    func decompressionBomb() throws {
        let bomb = BadInput.pngBomb()
        let header = try Pix.header(of: bomb)
        #expect(header.width == 50_000)
        #expect(header.height == 50_000)
        do {
            _ = try Pix(encoded: bomb, maxPixels: 100_000_000)
            Issue.record("the bomb should be refused")
        } catch {
            #expect(error.kind == .imageTooLarge)
            #expect(error.message.hasPrefix("image too large"))
            #expect(error.message.contains("50000x50000"))
        }
    }

    @Test("bad bytes fail with a reason, not a crash")
    func badInput() throws {
        let png = try phototest.encoded(as: .png)
        let cases: [([UInt8], String)] = [
            ([], "empty"),
            (Array(png.prefix(png.count / 2)), "truncated png"),
            (Array("hello, this is text\n".utf8), "looks like text"),
            (BadInput.randomBytes(5000), "unknown format"),
        ]
        for (bytes, reason) in cases {
            do {
                _ = try Pix(encoded: bytes)
                Issue.record("\(reason) should fail")
            } catch {
                #expect(error.message.contains(reason), "\(error.message) should mention \(reason)")
            }
        }
    }

    @Test("a missing file names the file and the system's reason")
    func missingFile() {
        do {
            _ = try Pix(contentsOfFile: "/nonexistent/page.png")
            Issue.record("missing file should fail")
        } catch {
            #expect(error.description.contains("/nonexistent/page.png"))
            #expect(error.message.contains("No such file"))
        }
    }

    @Test("crop, orthogonal rotation and scaling give the sizes asked for")
    func transforms() throws {
        let crop = try phototest.cropped(to: Box(x: 10, y: 20, width: 100, height: 50))
        #expect(crop.width == 100 && crop.height == 50)
        let turned = try phototest.rotatedOrthogonally(quarterTurns: 1)
        #expect(turned.width == 480 && turned.height == 640)
        let back = try turned.rotatedOrthogonally(quarterTurns: 3)
        #expect(back.hasSamePixels(as: phototest))
        let scaled = try phototest.grayscale().scaled(by: 2)
        #expect(scaled.width == 1280 && scaled.height == 960)
        let exact = try phototest.scaled(toWidth: 300, height: 200)
        #expect(exact.width == 300 && exact.height == 200)
        let bw = try phototest.grayscale().binarized()
        #expect(bw.depth == 1)
    }

    @Test("deskew measures a 3° rotation and straightens it")
    func deskew() throws {
        let gray = try phototest.grayscale()
        let skewed = try gray.rotated(byRadians: 3 * Double.pi / 180)
        let (straight, angle, confidence) = try skewed.deskewed()
        #expect(abs(abs(angle) - 3) < 0.5, "found \(angle)°")
        #expect(confidence > 2)
        #expect(straight.width == skewed.width)
        let (_, flatAngle, _) = try gray.deskewed()
        #expect(abs(flatAngle) < 0.3)
    }

    @Test("resolution tags are read and can be set")
    func resolution() throws {
        let gray = try phototest.grayscale()
        gray.setResolution(x: 300, y: 300)
        let decoded = try Pix(encoded: try gray.encoded(as: .png))
        #expect(decoded.resolution.y == 300)
    }

    @Test("decodedGray blends alpha onto white and keeps the size, format and resolution")
    func decodedGrayWithAlpha() throws {
        let gray = try phototest.grayscale()
        // The page painted black in its left half, which the alpha makes transparent: it must come out white.
        let color = try gray.rgb()
        color.drawLine(from: PixelPoint(x: 160, y: 0), to: PixelPoint(x: 160, y: 479), width: 320, red: 0, green: 0, blue: 0)
        let halves = try Pix(width: 640, height: 480, depth: 32)
        halves.drawLine(from: PixelPoint(x: 160, y: 0), to: PixelPoint(x: 160, y: 479), width: 320, red: 0, green: 0, blue: 0)
        let rgba = try color.withAlpha(try halves.rgbComponent(1))
        #expect(rgba.samplesPerPixel == 4)
        rgba.setResolution(x: 300, y: 300)
        let encoded = try rgba.encoded(as: .png)
        #expect(try Pix.header(of: encoded).samplesPerPixel == 4)
        let decoded = try Pix.decodedGray(encoded)
        #expect(decoded.depth == 8 && decoded.width == 640 && decoded.height == 480)
        #expect(decoded.inputFormat == .png)
        #expect(decoded.resolution.y == 300)
        var wrong = 0
        for y in stride(from: 0, to: 480, by: 7) {
            for x in stride(from: 0, to: 300, by: 11) where decoded.pixel(x: x, y: y) != 255 { wrong += 1 }
            for x in stride(from: 330, to: 640, by: 11) where abs(Int(decoded.pixel(x: x, y: y)) - Int(gray.pixel(x: x, y: y))) > 1 {
                wrong += 1
            }
        }
        #expect(wrong == 0)
    }

    @Test("a probe allocation tells memory that can be had from memory that cannot")
    func probe() {
        #expect(Pix.canAllocate(bytes: 1 << 20))
        #expect(!Pix.canAllocate(bytes: 1 << 52))
        let error = Pix.probedFailure(LeptonicaError("decode png", message: "damaged or truncated png data"), needing: 1 << 52)
        #expect(error.kind == .outOfMemory)
        #expect(error.message.contains("out of memory"))
        #expect(Pix.probedFailure(LeptonicaError("decode png", message: "damaged"), needing: 1 << 20).kind == .failed)
    }

    @Test("decode costs from headers: libpng's rows beside the 32-bit image, 16-bit PNG samples stripped to 8")
    func decodeCosts() {
        let rgba = ImageHeader(format: .png, width: 9000, height: 9000, bitsPerSample: 8, samplesPerPixel: 4, hasColormap: false)
        #expect(rgba.decodeCost.bitsPerPixel == 32)
        #expect(rgba.decodeCost.imageBytes == 324_000_000)
        #expect(rgba.decodeCost.transientBytes == 324_000_000)
        let deep = ImageHeader(format: .png, width: 1000, height: 1000, bitsPerSample: 16, samplesPerPixel: 1, hasColormap: false)
        #expect(deep.decodeCost.bitsPerPixel == 8)
        let jpeg = ImageHeader(format: .jpeg, width: 1000, height: 1000, bitsPerSample: 8, samplesPerPixel: 3, hasColormap: false)
        #expect(jpeg.decodeCost.transientBytes == 0)
        #expect(jpeg.decodeCost.imageBytes == 4_000_000)
    }
}
