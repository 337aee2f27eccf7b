import FarmCore
import Leptonica

/// enhance: flattens lighting and shadows, whitens the background and restores contrast. The OCR reads the
/// flattened gray page; the image kept for the PDF is in the chosen mode (color, gray, or black and white).
///
/// Light text on dark ground (slides, reverse-video bands, dark table headers) is inverted first
/// (`LightOnDarkInversion`): flattening would take such a region for paper in shadow and whiten it, letters and
/// all. The page kept for the PDF has those regions turned back, light on dark.
///
/// The paper's brightness at each point is estimated on a quarter-size copy (a gray closing wide enough to erase
/// text, then a box blur), and the page is divided by it: paper becomes white under any light or shadow. Then
/// the levels are stretched (the darkest half percent to black, the 90th percentile, paper, to white), and a thin
/// frame is whitened, because a page edge mixed with background is not content.
public struct EnhanceStage: PageStage {
    public let name = CorrectionStage.enhance.rawValue
    let mode: ImageMode

    public func run(_ image: Pix, _ context: inout PageContext) throws(PageFailure) -> Pix {
        do throws(LeptonicaError) {
            // Light-on-dark regions are inverted before flattening, which would take their dark ground for paper.
            let page = try Self.grayCopy(image)
            let inverted = try LightOnDarkInversion.invert(page)
            let flattened = try Self.flatten(owned: page, resolution: image.resolution)
            // The page as people see it has its bands light on dark: the kept picture has them turned back.
            let seen = inverted.isEmpty ? flattened : try LightOnDarkInversion.turnedBack(flattened, inverted)
            switch mode {
            // What is read is what is kept, unless reading needed regions inverted.
            case .gray: context.keptImage = inverted.isEmpty ? nil : seen
            case .bw: context.keptImage = try seen.sauvolaBinarized()
            case .color: context.keptImage = image
            }
            context.record(name, .object([("mode", JSON(mode.rawValue)), ("inverted_regions", JSON(inverted.count))]))
            return flattened
        } catch {
            throw error.failure(name)
        }
    }

    /// A gray raster of our own: luminance makes a new one from color, a gray input is copied (a clone would
    /// share its pixels with the caller's image).
    static func grayCopy(_ image: Pix) throws(LeptonicaError) -> Pix {
        image.depth == 32 ? try image.luminance() : try image.grayscale().copy()
    }

    /// Divides by the estimated paper brightness, stretches the levels and whitens the border. Works in place on
    /// one new gray image (with the background estimate beside it), so a full page costs two page-sized rasters.
    static func flatten(_ image: Pix) throws(LeptonicaError) -> Pix {
        try flatten(owned: grayCopy(image), resolution: image.resolution)
    }

    /// A level divided by the paper's brightness behind it, 255 · level / paper (paper 0 taken as 1) capped at 255,
    /// at `paper << 8 | level`: a page's millions of divisions become lookups in a table of 64 KB.
    private static let quotients: [UInt8] = (0..<(256 * 256)).map { (index: Int) -> UInt8 in
        let level = index & 255, paper = max(index >> 8, 1)
        return UInt8(min(255 * level / paper, 255))
    }

    /// `flatten` on a gray raster nobody else holds, changed in place and returned.
    static func flatten(owned page: Pix, resolution: (x: Int, y: Int)) throws(LeptonicaError) -> Pix {
        let width = page.width, height = page.height
        // Too small to hold lighting worth flattening (and for a quarter-size background map): left as it is.
        guard min(width, height) >= 16 else { return page }
        let scale = Double(width) / 2480
        let window = max(3, Int((31 * scale).rounded()) | 1)
        let background = try page.resampled(by: 0.25)
            .closedGray(width: window, height: window)
            .blurred(halfWidth: window / 2, halfHeight: window / 2)
            .scaled(toWidth: width, height: height)
        // Leptonica's rasters of two 8-bit images of one size line up byte for byte.
        var levels = LevelHistogram()
        page.withGrayBytes { pixels, bytesPerRow in
            background.withGrayBytes { paper, _ in
                quotients.withUnsafeBufferPointer { quotients in
                    for i in 0..<pixels.count { pixels[i] = quotients[Int(paper[i]) << 8 | Int(pixels[i])] }
                }
            }
            // Levels, sampled on every fourth pixel of every fourth row.
            for y in stride(from: 0, to: height, by: 4) {
                let row = y * bytesPerRow
                for x in stride(from: 0, to: width, by: 4) { levels.add(pixels[row + (x ^ 3)]) }
            }
        }
        let black = levels.percentile(0.005), white = max(levels.percentile(0.90), black + 1)
        let table: [UInt8] = (0..<256).map { value in
            UInt8(min(255, max(0, (value - black) * 255 / (white - black))))
        }
        let border = min(Int((0.005 * Double(width)).rounded()), width / 2, height / 2)
        page.withGrayBytes { pixels, bytesPerRow in
            table.withUnsafeBufferPointer { table in
                for i in 0..<pixels.count { pixels[i] = table[Int(pixels[i])] }
            }
            // A thin white frame: a page edge mixed with background is not content.
            for y in 0..<height {
                let row = y * bytesPerRow
                if y < border || y >= height - border {
                    for i in row..<(row + bytesPerRow) { pixels[i] = 255 }
                } else {
                    for x in 0..<border { pixels[row + (x ^ 3)] = 255 }
                    for x in (width - border)..<width { pixels[row + (x ^ 3)] = 255 }
                }
            }
        }
        page.setResolution(x: resolution.x, y: resolution.y)
        return page
    }
}
