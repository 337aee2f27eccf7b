import FarmCore
#if canImport(Glibc)
import Glibc
#endif

/// Where a page's image and its words go on a PDF page: the image as its file has it, turned by quarter turns
/// (a matrix, not the page's /Rotate, so every reader and `pdftotext -bbox` sees the same upright page), and the
/// words of the recognized page mapped onto it through the map to that image (orientation, deskew, scale and
/// rectification), so the text lies on the words of the picture shown.
public struct PDFPlacement: Sendable, Equatable {
    /// The page's size in points.
    public let width: Double
    public let height: Double
    /// The image's unit square → page points (the `cm` before the image is drawn).
    public let image: Homography
    /// The recognized page's pixels (y down) → page points (y up).
    public let words: Homography
    /// Quarter turns counterclockwise the image is shown turned by, so that its text reads upright.
    public let quarterTurns: Int

    /// - Parameters:
    ///   - imageWidth, imageHeight: the image's pixels as the PDF holds it.
    ///   - imageToReference: the held image's pixels → the reference image's (a JPEG's EXIF orientation).
    ///   - referenceWidth, referenceHeight: the image the boxes are mapped to (the decoded original).
    ///   - recognizedToReference: the recognized page's pixels → the reference image's.
    ///   - recognizedWidth, recognizedHeight: the recognized page's size (where its text direction is taken).
    ///   - resolution: pixels per inch of the reference image (sets the page's size).
    public init(imageWidth: Int, imageHeight: Int, imageToReference: Homography = .identity, referenceWidth: Int,
                referenceHeight: Int, recognizedToReference: Homography, recognizedWidth: Int, recognizedHeight: Int,
                resolution: Double)
    {
        let s = 72 / (resolution > 0 ? resolution : 300)
        // The recognized page's text direction in the reference image (y down: a positive angle turns clockwise).
        let center = Point(Double(recognizedWidth) / 2, Double(recognizedHeight) / 2)
        let a = recognizedToReference.apply(center), b = recognizedToReference.apply(Point(center.x + 1, center.y))
        let angle = atan2(b.y - a.y, b.x - a.x)
        let turns = angle.isFinite ? ((Int((angle / (.pi / 2)).rounded()) % 4) + 4) % 4 : 0
        let (w, h) = (Double(referenceWidth), Double(referenceHeight))
        // The reference turned counterclockwise by `turns` quarter turns: its text runs left to right.
        let display: Homography
        let size: (width: Double, height: Double)
        switch turns {
        case 1: (display, size) = (Homography([0, 1, 0, -1, 0, w, 0, 0, 1]), (h, w))
        case 2: (display, size) = (Homography([-1, 0, w, 0, -1, h, 0, 0, 1]), (w, h))
        case 3: (display, size) = (Homography([0, -1, h, 1, 0, 0, 0, 0, 1]), (h, w))
        default: (display, size) = (.identity, (w, h))
        }
        let toPoints = Homography([s, 0, 0, 0, -s, size.height * s, 0, 0, 1])
        let unitSquare = Homography([Double(imageWidth), 0, 0, 0, -Double(imageHeight), Double(imageHeight), 0, 0, 1])
        self.width = size.width * s
        self.height = size.height * s
        self.image = unitSquare.then(imageToReference).then(display).then(toPoints)
        self.words = recognizedToReference.then(display).then(toPoints)
        self.quarterTurns = turns
    }

    /// The image shown as it is, with the recognized page scaled onto it (the same picture, maybe another size).
    public init(imageWidth: Int, imageHeight: Int, recognizedWidth: Int, recognizedHeight: Int, resolution: Double) {
        self.init(imageWidth: imageWidth, imageHeight: imageHeight, referenceWidth: imageWidth, referenceHeight: imageHeight,
                  recognizedToReference: .scale(Double(imageWidth) / Double(max(recognizedWidth, 1)),
                                                Double(imageHeight) / Double(max(recognizedHeight, 1))),
                  recognizedWidth: recognizedWidth, recognizedHeight: recognizedHeight, resolution: resolution)
    }

    /// The EXIF orientation `orientation` (1-8) of a stored image `width` × `height` as a map from its pixels to the
    /// image as shown (what a decoder that applies the tag makes of it).
    public static func exifMap(_ orientation: Int, width: Int, height: Int) -> Homography {
        let (w, h) = (Double(width), Double(height))
        switch orientation {
        case 2: return Homography([-1, 0, w, 0, 1, 0, 0, 0, 1])
        case 3: return Homography([-1, 0, w, 0, -1, h, 0, 0, 1])
        case 4: return Homography([1, 0, 0, 0, -1, h, 0, 0, 1])
        case 5: return Homography([0, 1, 0, 1, 0, 0, 0, 0, 1])
        case 6: return Homography([0, -1, h, 1, 0, 0, 0, 0, 1])
        case 7: return Homography([0, -1, h, -1, 0, w, 0, 0, 1])
        case 8: return Homography([0, 1, 0, -1, 0, w, 0, 0, 1])
        default: return .identity
        }
    }

    /// Points per recognized pixel, about: the square root of the recognized page's area on the PDF page over its area
    /// in pixels.
    func scale(recognizedWidth: Int, recognizedHeight: Int) -> Double {
        let (w, h) = (Double(max(recognizedWidth, 1)), Double(max(recognizedHeight, 1)))
        let corners = [Point(0, 0), Point(w, 0), Point(w, h), Point(0, h)].map(words.apply)
        var area = 0.0
        for i in 0..<4 {
            let (p, q) = (corners[i], corners[(i + 1) % 4])
            area += p.x * q.y - q.x * p.y
        }
        let s = (abs(area) / 2 / (w * h)).squareRoot()
        return s.isFinite && s > 0 ? s : 72.0 / 300
    }
}

extension Homography {
    /// This map as a PDF matrix (`a b c d e f`), for a map without perspective.
    var pdfMatrix: String {
        [m[0], m[3], m[1], m[4], m[2], m[5]].map { SearchablePDF.number($0, places: 5) }.joined(separator: " ")
    }
}
