import FarmCore

/// One recognized page as the renderers see it: the result model, and the image its coordinates refer to.
///
/// Boxes are given in the original image (the file the archive keeps), since that is the picture a viewer shows:
/// each box on the corrected page is mapped back through rectification, rotation, skew and scale, and reported as
/// its bounding rectangle plus, where the formats allow, the exact quadrilateral.
public struct ExportPage: Sendable {
    public let result: PageResult
    /// The image file the coordinates refer to (as given by the user).
    public let imageName: String
    /// 1-based position of the page in the output document.
    public let number: Int
    /// Tesseract language codes the page was read in, in priority order.
    public let languages: [String]

    public init(result: PageResult, imageName: String, number: Int, languages: [String] = ["eng"]) {
        self.result = result
        self.imageName = imageName
        self.number = number
        self.languages = languages
    }

    /// Size of the original image (the recognized page's when the page was not corrected).
    public var imageWidth: Int { result.originalWidth ?? result.width }
    public var imageHeight: Int { result.originalHeight ?? result.height }

    /// The corners of a box in the original image (clockwise from top left).
    public func quad(_ box: Rect) -> Quad { result.originalQuad(of: box) }

    /// The bounding rectangle of a box in the original image, inside the image.
    public func bounds(_ box: Rect) -> Rect {
        let corners = quad(box).corners
        let left = clamp(corners.map(\.x).min() ?? 0, imageWidth), right = clamp(corners.map(\.x).max() ?? 0, imageWidth)
        let top = clamp(corners.map(\.y).min() ?? 0, imageHeight), bottom = clamp(corners.map(\.y).max() ?? 0, imageHeight)
        return Rect(x: left, y: top, width: max(0, right - left), height: max(0, bottom - top))
    }

    /// The quadrilateral of a box as integer points inside the image.
    public func polygon(_ box: Rect) -> [(x: Int, y: Int)] {
        quad(box).corners.map { (clamp($0.x, imageWidth), clamp($0.y, imageHeight)) }
    }

    /// Whether the boxes are turned or warped in the original image (a rectangle is not exact there).
    public var isWarped: Bool { result.toOriginal.map { !$0.isAxisAligned } ?? false }

    /// The page's main language as ISO 639-2 (Tesseract codes are mostly that already).
    public var language: String {
        let code = languages.first ?? "eng"
        return code.split(separator: "_").first.map(String.init) ?? code
    }

    private func clamp(_ value: Double, _ limit: Int) -> Int { min(limit, max(0, Int(value.rounded()))) }
}

extension Homography {
    /// True when the map only scales and translates (boxes stay upright rectangles).
    var isAxisAligned: Bool {
        let m = self.m
        return abs(m[1]) < 1e-9 && abs(m[3]) < 1e-9 && abs(m[6]) < 1e-12 && abs(m[7]) < 1e-12
    }
}
