import FarmPipeline
import TestSupport
import Testing

@Suite("PDF page rendering resolution")
struct PDFRasterizerTests {
    let letter = (width: 612.0, height: 792.0)

    @Test("a page covered by an image is rendered at the image's resolution, capped at 600 dpi")
    func imagePages() {
        let scan96 = PDFImageListing(width: 816, height: 1056, xPPI: 96, yPPI: 96)
        #expect(PDFRasterizer.resolution(images: [scan96], widthPoints: letter.width, heightPoints: letter.height,
                                         maxPixels: 100_000_000) == 96)
        let fine = PDFImageListing(width: 20_400, height: 26_400, xPPI: 2400, yPPI: 2400)
        #expect(PDFRasterizer.resolution(images: [fine], widthPoints: letter.width, heightPoints: letter.height,
                                         maxPixels: 100_000_000) == 600)
        // Unequal resolutions across and down: the finer one.
        let stretched = PDFImageListing(width: 1700, height: 1100, xPPI: 200, yPPI: 100)
        #expect(PDFRasterizer.resolution(images: [stretched], widthPoints: letter.width, heightPoints: letter.height,
                                         maxPixels: 100_000_000) == 200)
    }

    @Test("vector pages, and pages whose largest image is small on them, are rendered at 300 dpi")
    func vectorPages() {
        #expect(PDFRasterizer.resolution(images: [], widthPoints: letter.width, heightPoints: letter.height,
                                         maxPixels: 100_000_000) == 300)
        let logo = PDFImageListing(width: 600, height: 300, xPPI: 600, yPPI: 600)  // 1 × 0.5 inch
        #expect(PDFRasterizer.resolution(images: [logo], widthPoints: letter.width, heightPoints: letter.height,
                                         maxPixels: 100_000_000) == 300)
    }

    @Test("a large page stays within the pixel limit")
    func pixelLimit() {
        // 50 × 50 inches: 72·√(10⁸ / 3600²) = 200 dpi.
        #expect(PDFRasterizer.resolution(images: [], widthPoints: 3600, heightPoints: 3600, maxPixels: 100_000_000) == 200)
        let poster = PDFImageListing(width: 2550, height: 3300, xPPI: 102, yPPI: 102)
        let dpi = PDFRasterizer.resolution(images: [poster], widthPoints: 1800, heightPoints: 3600, maxPixels: 10_000_000)
        #expect(dpi < 102 && Double(dpi) * 25 * Double(dpi) * 50 <= 10_000_000)
    }

    @Test("pdfimages -list rows are read; masks and headers are not images")
    func imageList() {
        let listing = """
            page   num  type   width height color comp bpc  enc interp  object ID x-ppi y-ppi size ratio
            --------------------------------------------------------------------------------------------
               1     0 image     958   400  rgb     3   8  image  no         7  0    96    96 45.1K 4.0%
               1     1 smask     958   400  gray    1   8  image  no         8  0    96    96 1.1K 0.3%
            Syntax Warning: something odd
            """
        #expect(PDFRasterizer.parseImageList(listing) == [PDFImageListing(width: 958, height: 400, xPPI: 96, yPPI: 96)])
    }
}

/// A damaged PDF page is drawn as far as it goes, and says so.
@Suite("PDF pages drawn with errors")
struct PDFDrawingErrorsTests {
    @Test("a page whose resources are a 50,000-deep array is drawn with pdftoppm's errors in the decode finding; a sound page has none")
    func damagedResources() throws {
        let damaged = try PageProcessor.decode(.pdf(TestPDF.damagedResources("Lost words"), index: 0))
        #expect(!damaged.drawingErrors.isEmpty)
        let finding = damaged.findings["pdf_errors"]
        #expect((finding?["count"]?.intValue ?? 0) >= 1, "\(damaged.findings)")
        #expect(finding?["first"]?[0]?.stringValue?.contains("Error") == true, "\(damaged.findings)")
        let sound = try PageProcessor.decode(.pdf(TestPDF.pages([(width: 612, height: 792, rotate: 0)]), index: 0))
        #expect(sound.drawingErrors.isEmpty, "\(sound.drawingErrors)")
        #expect(sound.findings["pdf_errors"] == nil)
    }
}
